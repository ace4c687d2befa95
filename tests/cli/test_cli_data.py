"""`gradcli run` on a spec with data: values and gradients on the first training batch (numpy and
torch), checked against the logistic loss computed here with numpy from the csv itself."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
EXAMPLE = ROOT / "experiments" / "data" / "two_blobs.yaml"
CSV = EXAMPLE.with_suffix(".csv")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def first_batch(seed: int, test: float):
    """The example's first batch by spec-v2's definitions, from the csv read with numpy."""
    raw = np.genfromtxt(CSV, delimiter=",", names=True, dtype=None, encoding="utf-8")
    x = np.column_stack([raw["x1"], raw["x2"]]).astype(np.float64)
    y = np.searchsorted(np.unique(raw["color"]), raw["color"])  # blue 0, red 1
    perm = np.random.default_rng([seed, 1]).permutation(len(y))
    n_test = round(test * len(y))
    train_x, train_y = x[perm[n_test:]], y[perm[n_test:]]
    train_x = (train_x - train_x.mean(axis=0)) / train_x.std(axis=0)
    order = np.random.default_rng([seed, 2, 0]).permutation(len(train_y))
    return train_x[order], train_y[order]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("seed", [0, 5])
def test_values_and_gradients_are_the_first_batchs(backend, seed):
    result = invoke("run", EXAMPLE, "--backend", backend, "--set", f"seed={seed}",
                    "--set", "expect=null", "--format", "json")  # its expect is for seed 0
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    x, y = first_batch(seed, 0.2)
    w, b = np.array([0.5, -0.25]), 0.1
    z = x @ w + b
    loss = np.mean(np.logaddexp(0, z) - y * z)
    dz = (1 / (1 + np.exp(-z)) - y) / len(y)
    np.testing.assert_allclose(doc["values"]["z"], z, rtol=1e-12, atol=1e-14)
    assert doc["values"]["loss"] == pytest.approx(loss, rel=1e-12)
    grads = doc["gradients"]["loss"]
    np.testing.assert_allclose(grads["w"]["overridden"], x.T @ dz, rtol=1e-10)
    np.testing.assert_allclose(grads["b"]["true"], dz.sum(), rtol=1e-10)
    assert len(doc["values"]["z"]) == 24 and set(grads) == {"w", "b"}


def test_output_may_not_replace_the_data_file():
    before = CSV.read_bytes()
    result = invoke("run", EXAMPLE, "--output", CSV)
    assert result.exit_code == 2
    assert "two_blobs.csv" in result.stderr and CSV.read_bytes() == before


def test_a_missing_scikit_learn_exits_2_with_the_pip_hint(tmp_path, monkeypatch):
    spec = tmp_path / "s.yaml"
    spec.write_text("data: {load: {dataset: iris}, features: X, labels: y}\n"
                    "inputs:\n  w: {zeros: 4}\noutputs:\n  loss: sum(matmul(X, w))\n")
    monkeypatch.setitem(sys.modules, "sklearn", None)
    result = invoke("run", spec)
    assert result.exit_code == 2
    assert "needs scikit-learn, which is not installed (pip install 'gradcli[data]')" in \
        result.stderr
    assert "Traceback" not in result.output


COMBINED = """\
dtype: float32
seed: 3
data: {load: two_blobs.csv, features: X, labels: y, test: 0.5}
inputs:
  w: [0.4, -1.5]
register:
  STE: where(abs(x) <= 1, dy, 0)
override_map: {sign: STE}
let:
  z: matmul(X, sign(w))
outputs:
  loss: mean(softplus(z) - cast(y, dtype(z)) * z)
"""


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_data_with_an_override_and_float32(tmp_path, backend):
    """Binary weights through a straight-through sign on unscaled float32 rows: the overridden
    gradient is X^T dz masked where |w| > 1, the true one is zero."""
    (tmp_path / "two_blobs.csv").write_bytes(CSV.read_bytes())
    (tmp_path / "s.yaml").write_text(COMBINED)
    result = invoke("run", tmp_path / "s.yaml", "--backend", backend, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    raw = np.genfromtxt(CSV, delimiter=",", names=True, dtype=None, encoding="utf-8")
    x = np.column_stack([raw["x1"], raw["x2"]])
    y = (raw["color"] == "red").astype(np.int64)
    perm = np.random.default_rng([3, 1]).permutation(30)
    order = np.random.default_rng([3, 2, 0]).permutation(15)
    xb = x[perm[15:]][order].astype(np.float32).astype(np.float64)
    yb = y[perm[15:]][order]
    w = np.array([0.4, -1.5], np.float32)
    z = xb @ np.sign(w)
    dz = (1 / (1 + np.exp(-z)) - yb) / len(yb)
    np.testing.assert_allclose(doc["values"]["z"], z, rtol=1e-6)
    grads = doc["gradients"]["loss"]["w"]
    np.testing.assert_allclose(grads["overridden"], (xb.T @ dz) * (np.abs(w) <= 1), rtol=1e-5,
                               atol=1e-7)
    assert grads["true"] == [0.0, 0.0]
