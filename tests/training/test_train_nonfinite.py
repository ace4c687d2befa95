"""on_nonfinite: stop (a result, with the step and where the NaN was born), error (exit 1),
continue (v1's behaviour); metrics without data; expect finite fails on a stopped run."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli import runner
from gradcli.cli import cli
from gradcli.spec import load_spec_text
from gradcli.training import NonfiniteLoss

# w -> w - lr / w with lr 0.75: 1 -> 0.25 -> -2.75, whose log is NaN at step 2
SPEC = """
inputs:
  w: 1.0
outputs:
  loss: log(w)
train:
  optimizer: {name: sgd, lr: 0.75}
  steps: 4
"""
LR = float(np.float32(0.75))  # 0.75 exactly


def run(text: str, backend: str = "numpy"):
    return runner.run(load_spec_text(text, path="spec.yaml"), backend=backend, numeric=False)


def test_stop_is_a_result_with_the_step_and_the_birth(backend):
    train = run(SPEC, backend).train
    w1 = 1.0 - LR / 1.0
    w2 = w1 - LR / w1
    assert train.loss[:2] == pytest.approx([0.0, math.log(w1)]) and math.isnan(train.loss[2])
    assert len(train.loss) == 3 and train.steps == 2
    assert train.final["w"] == pytest.approx(w2)  # the values the stopping step started from
    stopped = train.stopped
    assert stopped["step"] == 2 and stopped["reason"] == "non-finite loss"
    born = stopped["nonfinite"]
    assert (born.phase, born.op, born.expr, born.step) == ("train", "log", "log(w)", 2)
    assert born.location == "spec.yaml:5:9"
    assert math.isnan(train.final_loss)


def test_continue_keeps_stepping_as_v1_did():
    train = run(SPEC.replace("steps: 4", "steps: 4\n  on_nonfinite: continue")).train
    assert len(train.loss) == 4 and train.steps == 4 and train.stopped is None
    assert train.nonfinite.step == 2 and train.nonfinite.op == "log"


def test_error_raises_with_exit_code_1(backend):
    with pytest.raises(NonfiniteLoss) as info:
        run(SPEC.replace("steps: 4", "steps: 4\n  on_nonfinite: error"), backend)
    assert info.value.exit_code == 1
    assert "step 2" in str(info.value) and "log(w)" in str(info.value)


def test_cli_exit_codes(tmp_path):
    stop = tmp_path / "stop.yaml"
    stop.write_text(SPEC)
    error = tmp_path / "error.yaml"
    error.write_text(SPEC.replace("steps: 4", "steps: 4\n  on_nonfinite: error"))
    finite = tmp_path / "finite.yaml"
    finite.write_text(SPEC + "expect: {finite: true}\n")
    cli_runner = CliRunner()
    assert cli_runner.invoke(cli, ["run", str(stop), "--format", "json"]).exit_code == 0
    assert cli_runner.invoke(cli, ["run", str(error)]).exit_code == 1
    result = cli_runner.invoke(cli, ["run", str(finite), "--format", "json"])
    assert result.exit_code == 1
    assert any("finite" in f for f in json.loads(result.stdout)["expect"]["failures"])


def test_metrics_without_data_every_eval_every_steps(backend):
    """Without data, metrics are taken on the spec's values before the first step, every
    eval_every steps and after the last: sgd on (w - 3)^2 has w_t = 3 - 3 * 0.8 ** t."""
    text = """
inputs:
  w: 0.0
outputs:
  loss: square(w - 3)
train:
  optimizer: {name: sgd, lr: 0.1}
  steps: 5
  eval_every: 2
  metrics: {gap: abs(w - 3), twice: 2 * w}
"""
    train = run(text, backend).train
    lr = float(np.float32(0.1))
    w, ws = 0.0, [0.0]
    for _ in range(5):
        w = w - 2 * (w - 3) * lr
        ws.append(w)
    assert train.eval_steps == [0, 2, 4, 5] and train.epochs is None
    assert list(train.metrics["gap"]) == ["train"]  # no test part without data
    assert train.metrics["gap"]["train"] == pytest.approx([abs(ws[s] - 3) for s in (0, 2, 4, 5)])
    assert train.final_metrics["gap"] == pytest.approx({"train": abs(ws[5] - 3)})
    assert train.final_metrics["twice"] == pytest.approx({"train": 2 * ws[5]})
    assert train.final_loss == pytest.approx((ws[5] - 3) ** 2)
