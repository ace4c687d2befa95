"""A NaN in a training metric (on the training or the test part) or made by a constraint is
non-finite like any other (audit10 E, F): `expect: {finite: true}` fails, and the record says
where it was born, inside the metric's or constraint's expression, at its step. Whether a
value is NaN is numpy's answer, called here on the same numbers."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from spec_v2 import split

from gradcli import runner
from gradcli.cli import cli
from gradcli.spec import load_spec_text
from gradcli.training import NonfiniteLoss

W0 = [0.5, -1.5, 2.0]
METRIC = f"""
inputs:
  w: {W0}
outputs:
  loss: sum(square(w * 3.0 - 1.0))
train:
  optimizer: {{name: sgd, lr: 0.01}}
  steps: 3
  metrics:
    bad: mean(log(w - 10.0))
expect:
  finite: true
"""
CONSTRAINT = f"""
inputs:
  w: {W0}
  v: [1.0, 1.0, 1.0]
outputs:
  loss: sum(square(w * 3.0 - 1.0)) + sum(v * 0.0)
train:
  optimizer: {{name: sgd, lr: 0.01}}
  steps: 2
  constraints:
    v: log(v - 10.0)
expect:
  finite: true
"""


def run(text: str, backend: str, path: str = "spec.yaml"):
    return runner.run(load_spec_text(text, path=path), backend=backend, numeric=False)


def place(text: str, needle: str, path: str = "spec.yaml") -> str:
    """file:line:col of the first `needle` in the spec text (both 1-based)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return f"{path}:{number}:{line.index(needle) + 1}"
    raise AssertionError(needle)


def only_birth(result):
    assert result.expect is not None and not result.expect.passed and result.exit_code == 1
    (born,) = [n for n in result.nonfinite if n.phase == "train"]
    return born


def test_a_nan_metric_fails_finite_and_is_born_in_its_expression(backend):
    with np.errstate(invalid="ignore"):  # and stays NaN: w moves by < 1
        assert np.isnan(np.mean(np.log(np.array(W0) - 10.0)))
    result = run(METRIC, backend)
    assert all(np.isnan(result.train.metrics["bad"]["train"]))
    born = only_birth(result)
    assert (born.op, born.expr, born.step) == ("log", "log(w - 10.0)", 0)
    assert born.location == place(METRIC, "log(w - 10.0)")
    assert (born.tensor, born.value, born.born) == ("metrics.bad.train", "nan", "nan")
    assert result.expect.failures == [
        f"finite: train metrics.bad.train is NaN at step 0, born as NaN at log(w - 10.0) "
        f"({place(METRIC, 'log(w - 10.0)')})"]


def test_the_step_is_the_evaluation_at_which_a_metric_turns_nan(backend):
    """sgd on (w - 2)^2 from 0 with lr 0.25: w_t = 1 + w_(t-1) / 2 (0, 1, 1.5, ...);
    log(1.2 - w) is NaN once w > 1.2, first at the evaluation after 2 steps."""
    text = """
inputs: {w: 0.0}
outputs: {loss: square(w - 2)}
train: {optimizer: {name: sgd, lr: 0.25}, steps: 4, metrics: {gap: log(1.2 - w)}}
"""
    ws = [0.0]
    for _ in range(4):
        ws.append(ws[-1] - 2 * (ws[-1] - 2) * 0.25)
    with np.errstate(invalid="ignore"):
        oracle = np.log(1.2 - np.array(ws))
    first = int(np.flatnonzero(np.isnan(oracle))[0])
    assert first == 2
    train = run(text + "expect: {finite: true}\n", backend).train
    np.testing.assert_allclose(train.metrics["gap"]["train"], oracle, rtol=1e-12)
    born = train.nonfinite
    assert (born.op, born.expr, born.step, born.tensor) == ("log", "log(1.2 - w)", first,
                                                            "metrics.gap.train")
    # without `finite`, the record is there and the run passes as before
    assert run(text, backend).exit_code == 0


def test_a_finite_metric_still_passes_finite(backend):
    result = run(METRIC.replace("log(w - 10.0)", "log(w + 10.0)"), backend)
    assert np.all(np.isfinite(np.log(np.array(W0) + 10.0)))
    assert result.expect.passed and result.nonfinite == [] and result.train.nonfinite is None


# ----- with data: a NaN only on the test part -----
N, TEST, SEED = 8, 0.25, 3
DATA = f"""
seed: {SEED}
data: {{load: d.npz, features: X, labels: y, test: {TEST}}}
inputs:
  W: [[0.3, -0.2], [-0.4, 0.25]]
outputs:
  loss: mean(-sum(one_hot(y, 2) * log_softmax(matmul(X, W), axis=1), axis=1))
train:
  optimizer: {{name: sgd, lr: 0.1}}
  epochs: 2
  metrics:
    fine: mean(X)
    far: mean(log(X + 100.0))
expect:
  finite: true
"""


@pytest.fixture(scope="module")
def data_folder(tmp_path_factory):
    """Rows in [-1, 1], but one of the test part's is -1000 (log(x + 100) is NaN there)."""
    path = tmp_path_factory.mktemp("nan_test_part")
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, size=(N, 2))
    test_rows, _ = split(N, TEST, SEED)
    x[test_rows[0], 1] = -1000.0
    np.savez(path / "d.npz", X=x, y=rng.integers(0, 2, N).astype(np.int64))
    return path


def test_a_metric_nan_only_on_the_test_part_fails_finite(backend, data_folder):
    x = np.load(data_folder / "d.npz")["X"]
    test_rows, train_rows = split(N, TEST, SEED)
    with np.errstate(invalid="ignore"):
        assert np.isfinite(np.mean(np.log(x[train_rows] + 100.0)))
        assert np.isnan(np.mean(np.log(x[test_rows] + 100.0)))
    path = str(data_folder / "spec.yaml")
    result = run(DATA, backend, path)
    far = result.train.metrics["far"]
    assert np.all(np.isfinite(far["train"])) and np.all(np.isnan(far["test"]))
    born = only_birth(result)
    assert (born.op, born.expr, born.step) == ("log", "log(X + 100.0)", 0)
    assert born.location == place(DATA, "log(X + 100.0)", path)
    assert born.tensor == "metrics.far.test"


# ----- a constraint -----
def test_a_nan_made_by_a_constraint_is_born_in_it_not_at_the_input(backend):
    # step 0 leaves v at 1 (its gradient is 0), then v := log(v - 10)
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.log(np.array([1.0, 1.0, 1.0]) - 10.0)).all()
    result = run(CONSTRAINT, backend)
    first = result.nonfinite[0]
    assert (first.phase, first.op, first.expr, first.step) == ("train", "log", "log(v - 10.0)", 0)
    assert first.location == place(CONSTRAINT, "log(v - 10.0)")
    assert first.tensor == "constraints.v"
    assert result.expect.failures[0] == (
        f"finite: train constraints.v is NaN at step 0, born as NaN at log(v - 10.0) "
        f"({place(CONSTRAINT, 'log(v - 10.0)')})")
    stopped = result.train.stopped  # its NaN reached the loss of the next step
    assert stopped["step"] == 1
    born = stopped["nonfinite"]  # the loss's NaN, born in the constraint, not at v's declaration
    assert (born.tensor, born.op, born.expr, born.step) == ("loss", "log", "log(v - 10.0)", 0)
    assert born.location == first.location


def test_a_loss_made_nan_by_an_update_is_born_where_the_update_was(backend):
    """sqrt(w) at w = 0: the gradient 0.5 / sqrt(0) is inf, the update makes w -inf, and the
    next loss is NaN: born in the gradient of sqrt(w) at step 0 (on_nonfinite: error says so)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = 0.5 / np.sqrt(np.array([0.0, 1.0]))
        assert np.isinf(grad[0]) and np.isnan(np.sqrt(np.array([0.0, 1.0]) - 0.01 * grad)[0])
    text = """
inputs:
  w: [0.0, 1.0]
outputs:
  loss: sum(sqrt(w))
train:
  optimizer: {name: sgd, lr: 0.01}
  steps: 3
"""
    train = run(text, backend).train
    assert train.nonfinite.step == 0 and train.nonfinite.expr == "sqrt(w)"
    born = train.stopped["nonfinite"]
    assert (born.tensor, born.expr, born.step, born.value) == ("loss", "sqrt(w)", 0, "nan")
    assert born.location == place(text, "sqrt(w)") and born.op == train.nonfinite.op
    with pytest.raises(NonfiniteLoss, match=r"at step 1; born as inf at sqrt\(w\)"):
        run(text.replace("steps: 3", "steps: 3\n  on_nonfinite: error"), backend)


FINAL = """
inputs:
  w: [0.5, 2.0]
outputs:
  loss: sum(log(w))
train:
  loss: loss
  optimizer: {name: sgd, lr: 0.3}
  steps: 1
expect:
  finite: true
"""


def test_a_final_loss_made_nan_by_the_last_update_fails_finite(backend):
    """Every step's loss and update finite (one step: log(0.5) + log(2) = 0, w -> [-0.1, 1.85]),
    and yet the final loss is NaN: log of the negative w. `finite` passed it before."""
    w = np.array([0.5, 2.0])
    after = w - 0.3 / w  # d sum(log(w)) / dw = 1 / w
    with np.errstate(invalid="ignore"):
        assert np.isfinite(after).all() and np.isnan(np.sum(np.log(after)))
    result = run(FINAL, backend)
    assert np.isnan(result.train.final_loss) and np.isfinite(result.train.loss).all()
    np.testing.assert_allclose(result.train.final["w"], after, rtol=1e-6)  # float32
    born = only_birth(result)
    assert (born.op, born.expr, born.step, born.tensor) == ("log", "log(w)", 1, "final_loss")
    assert born.location == place(FINAL, "log(w)")
    assert result.expect.failures == [
        f"finite: train final_loss is NaN at step 1, born as NaN at log(w) "
        f"({place(FINAL, 'log(w)')})"]


# ----- what the command says -----
def test_cli_text_and_json(tmp_path):
    spec = tmp_path / "fin.yaml"
    spec.write_text(METRIC)
    cli_runner = CliRunner()
    text = cli_runner.invoke(cli, ["run", str(spec)])
    assert text.exit_code == 1
    assert "finite: train metrics.bad.train is NaN at step 0" in text.stdout
    assert "non-finite: training step 0: NaN born at log(w - 10.0)" in text.stdout
    out = cli_runner.invoke(cli, ["run", str(spec), "--format", "json"])
    assert out.exit_code == 1
    doc = json.loads(out.stdout)
    assert doc["nonfinite"] == [{"pass": "train", "op": "log", "expr": "log(w - 10.0)",
                                 "location": place(METRIC, "log(w - 10.0)", str(spec)),
                                 "tensor": "metrics.bad.train", "step": 0, "value": "NaN",
                                 "born": "NaN"}]
    assert doc["expect"]["passed"] is False


def test_the_verdict_does_not_depend_on_finding_the_op(monkeypatch):
    """Where a backend's walk finds no op, the metric's expression itself is the birth, and
    `finite` still fails."""
    from gradcli.backends.numpy_train import NumpyTrainee
    monkeypatch.setattr(NumpyTrainee, "locate", lambda self, kind, name, label, step: None)
    result = run(METRIC, "numpy")
    born = only_birth(result)
    assert (born.op, born.expr, born.step) == (None, "mean(log(w - 10.0))", 0)
    assert born.location == place(METRIC, "mean(log(w - 10.0))")
