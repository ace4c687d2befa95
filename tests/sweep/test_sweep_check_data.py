"""Checking a sweep's values reads and parses a `data:` file once per check, not once per
swept value (a 16.7 MB csv took 23 s per value); a swept data key still loads each file."""
import numpy as np
import pytest
from click.testing import CliRunner

from gradcli import data
from gradcli.cli import cli
from gradcli.spec import shared_loads

SPEC = """name: d
seed: 0
data: {load: LOAD, features: X, labels: y}
inputs:
  w: [0.5, -0.5]
outputs:
  loss: mean((matmul(X, w) - cast(y, dtype(w))) ** 2)
train: {loss: loss, optimizer: {name: sgd, lr: 0.1}, steps: 2}
sweep:
  SWEEP
"""


@pytest.fixture
def loads(monkeypatch):
    """The csv texts and npz files parsed, in order."""
    seen, parse_csv, from_arrays = [], data.parse_csv, data.from_arrays
    monkeypatch.setattr(data, "parse_csv", lambda text, label=None: (
        seen.append("csv"), parse_csv(text, label))[1])
    monkeypatch.setattr(data, "from_arrays", lambda *a, **k: (
        seen.append("npz"), from_arrays(*a, **k))[1])
    return seen


def write(tmp_path, load, sweep):
    (tmp_path / "a.csv").write_text("f1,f2,y\n1,2,0\n3,4,1\n5,6,0\n")
    (tmp_path / "b.csv").write_text("f1,f2,y\n1,2,1\n3,4,1\n5,6,0\n")
    np.savez(tmp_path / "a.npz", X=np.arange(6.0).reshape(3, 2), y=np.array([0, 1, 0]))
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("LOAD", load).replace("SWEEP", sweep))
    return spec


@pytest.mark.parametrize("load, kind", [("a.csv", "csv"), ("a.npz", "npz")])
def test_a_data_file_is_loaded_once_per_check(tmp_path, loads, load, kind):
    spec = write(tmp_path, load, "seed: [0, 1, 2, 3, 4, 5, 6, 7]")
    done = CliRunner().invoke(cli, ["check", str(spec)])
    assert done.exit_code == 0, done.output
    assert loads == [kind, kind]  # the spec itself, then the check of its 8 seeds


def test_a_swept_data_file_is_loaded_per_file(tmp_path, loads):
    spec = write(tmp_path, "a.csv", "data.load: [a.csv, b.csv, a.csv]\n  seed: [0, 1]")
    done = CliRunner().invoke(cli, ["check", str(spec)])
    assert done.exit_code == 0, done.output
    assert loads == ["csv", "csv", "csv"]  # a.csv for the spec; a.csv, b.csv in the check


def test_outside_a_check_nothing_is_kept(tmp_path, loads):
    spec = write(tmp_path, "a.csv", "seed: [0]")
    from gradcli.spec import load_spec
    load_spec(spec)
    load_spec(spec)
    assert loads == ["csv", "csv"] and shared_loads._SHARED is None
