"""The tables spell a non-finite birth one way: the training-stopped line wrote the JSON's
"Infinity" beside the non-finite note's "inf" (tryout8 finding 7). JSON keeps "Infinity".
The oracle for where training stops: the same SGD written with numpy.
"""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.render_train import stopped_text

SPEC = """\
name: diverge
inputs:
  x: [3.0, -2.0]
outputs:
  loss: sum(x ** 4) + sum(log(abs(x)))
train:
  optimizer: {name: sgd, lr: 10.0}
  steps: 10
"""


def numpy_stop() -> int:
    x = np.array([3.0, -2.0])
    with np.errstate(all="ignore"):
        for step in range(10):
            if not np.isfinite(np.sum(x ** 4) + np.sum(np.log(np.abs(x)))):
                return step
            x = x - 10.0 * (4 * x ** 3 + 1 / x)
    raise AssertionError("numpy's SGD did not diverge")


def test_stopped_line_and_note_both_say_inf_and_json_says_infinity(tmp_path):
    path = tmp_path / "diverge.yaml"
    path.write_text(SPEC)
    step = numpy_stop()
    table = CliRunner().invoke(cli, ["run", str(path), "--no-numeric"],
                               env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    lines = [line for line in table.stdout.splitlines() if " born at " in line]
    assert len(lines) == 2 and lines[0].startswith(f"training stopped at step {step}: ")
    assert all("; inf born at x ** 4" in line or ": inf born at x ** 4" in line for line in lines)
    assert "Infinity" not in table.stdout
    doc = json.loads(CliRunner().invoke(cli, ["run", str(path), "--no-numeric", "--format",
                                              "json"]).stdout)
    assert doc["train"]["stopped"]["nonfinite"]["born"] == "Infinity"
    assert doc["train"]["stopped"]["step"] == step


def test_a_stopped_record_read_back_from_json_is_spelled_as_the_tables_spell_it():
    for born, shown in (("Infinity", "inf"), ("-Infinity", "-inf"), ("NaN", "NaN")):
        text = stopped_text({"step": 2, "reason": "non-finite loss",
                             "nonfinite": {"born": born, "expr": "exp(x)", "op": "exp",
                                           "location": "s.yaml:3:5"}})
        assert text.plain == (f"training stopped at step 2: non-finite loss; {shown} born at "
                              "exp(x)  s.yaml:3:5 (op exp)")



CELLS = """\
name: cells
inputs:
  x: [0.0, 4.0]
outputs:
  y: sum(sqrt(x))
  z: -sum(log(x))
wrt: [x]
"""


def test_a_table_cell_spells_infinity_as_the_note_does(tmp_path):
    """note8: a non-finite cell showed `∞` where the notes said `inf`."""
    x = np.array([0.0, 4.0])
    with np.errstate(all="ignore"):  # by hand: d sqrt(x) = 0.5 / sqrt(x), d -log(x) = -1 / x
        dy, dz, z = 0.5 / np.sqrt(x), -1 / x, float(-np.sum(np.log(x)))
    assert dy.tolist() == [np.inf, 0.25] and dz.tolist() == [-np.inf, -0.25] and z == np.inf
    path = tmp_path / "cells.yaml"
    path.write_text(CELLS)
    table = CliRunner().invoke(cli, ["run", str(path), "--no-numeric"],
                               env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "∞" not in table.stdout
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table.stdout.splitlines()
             if line.startswith("│ ")]
    assert ["z", "scalar", "inf"] in cells  # the values table
    assert ["x", "[0]", "0", "inf", "inf", "skipped"] in cells  # gradients of y
    assert ["x", "[0]", "0", "-inf", "-inf", "skipped"] in cells  # gradients of z
    assert "reaches z (inf)" in table.stdout and "-inf born at log(x)" in table.stdout


NAN_SPEC = """\
name: roots
inputs:
  x: [-1.0, 0.5, 2.0]
outputs:
  y: sum(sqrt(x))
  s: sqrt(x)
wrt: [x]
expect:
  values:
    s: [1.0, 0.5, 2.0]
  finite: true
"""

TRAIN_NAN = """\
name: roots-train
inputs:
  w: [1.0, 2.0]
outputs:
  loss: sum(log(w - 1.5))
train:
  optimizer: {name: sgd, lr: 0.1}
  steps: 3
  on_nonfinite: error
"""


def _cells(text):
    return [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines()
            if line.startswith("│ ")]


def _no_lowercase_nan(text):
    import re
    assert not re.search(r"\bnan\b", text), text


def test_nan_is_spelled_as_the_notes_spell_it_in_cells_arrays_and_messages(tmp_path):
    """note9: NaN was `nan` in table cells, arrays and expect failures, `NaN` in the notes
    beside them. The oracle: numpy's sqrt and its gradient 0.5 / sqrt(x)."""
    x = np.array([-1.0, 0.5, 2.0])
    with np.errstate(invalid="ignore"):
        s, ds = np.sqrt(x), 0.5 / np.sqrt(x)
    assert np.isnan(s[0]) and np.isnan(ds[0]) and np.isnan(s.sum())
    path = tmp_path / "roots.yaml"
    path.write_text(NAN_SPEC)
    env = {"NO_COLOR": "1", "COLUMNS": "200"}
    table = CliRunner().invoke(cli, ["run", str(path), "--no-numeric"], env=env)
    assert table.exit_code == 1, table.output  # expect fails: s differs and is not finite
    _no_lowercase_nan(table.stdout + table.stderr)
    cells = _cells(table.stdout)
    assert ["y", "scalar", "NaN"] in cells
    assert ["s", "(3,)", f"[     NaN, {s[1]:.6f}, {s[2]:.6f}]"] in cells
    assert ["x", "[0]", "-1", "NaN", "NaN", "skipped"] in cells
    assert ["", "[1]", "0.5", f"{ds[1]:.6g}", f"{ds[1]:.6g}", "skipped"] in cells
    flat = " ".join(table.stdout.split())
    assert "finite: forward y is NaN, born as NaN at sqrt(x)" in flat
    assert f"values.s: expected [1. 0.5 2. ], got [ NaN {s[1]:.6f} {s[2]:.6f}]" in flat
    assert "reaches y (NaN)" in flat
    # JSON keeps its strings, as before
    doc = json.loads(CliRunner().invoke(cli, ["run", str(path), "--no-numeric",
                                              "--format", "json"]).stdout)
    assert doc["values"]["y"] == "NaN" and doc["values"]["s"][0] == "NaN"


def test_compare_cells_and_a_stopped_training_error_say_nan_as_nan(tmp_path):
    path = tmp_path / "roots.yaml"
    path.write_text(NAN_SPEC.split("expect:")[0])
    env = {"NO_COLOR": "1", "COLUMNS": "200"}
    compared = CliRunner().invoke(cli, ["compare", str(path), str(path)], env=env)
    assert compared.exit_code == 0, compared.output
    _no_lowercase_nan(compared.stdout)
    rows = _cells(compared.stdout)
    assert ["y/x", "0", "NaN", "NaN", "NaN", "0"] in rows  # NaN against NaN agrees: 0
    assert ["", "1", *[f"{0.5 / np.sqrt(0.5):.6g}"] * 3, ""] in rows
    with np.errstate(invalid="ignore"):  # numpy: log(1 - 1.5) is NaN at step 0
        assert np.isnan(np.sum(np.log(np.array([1.0, 2.0]) - 1.5)))
    train = tmp_path / "train.yaml"
    train.write_text(TRAIN_NAN)
    stopped = CliRunner().invoke(cli, ["run", str(train)], env=env)
    assert stopped.exit_code == 1  # on_nonfinite: error: the expectation of a finite loss
    assert "train.loss 'loss' is NaN at step 0; born as NaN at log(w - 1.5)" in stopped.stderr
    _no_lowercase_nan(stopped.stderr)
