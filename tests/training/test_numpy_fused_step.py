"""The numpy core's fused training step (feed, replay, update, verdict and in-place clip in one
call), taken by models above the small-model size (no per-step record), in each of the places
where it hands the step back to the loop: constraints that are not all clips (replayed), a
non-finite loss, a non-finite update. Checked against the loop written out in numpy here."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli import runner
from gradcli.backends.numpy_train import NumpyTrainee
from gradcli.backends.program import SMALL
from gradcli.spec import load_spec_text


def literal(a) -> str:
    return repr(np.asarray(a).tolist())


X = np.random.default_rng(11).normal(size=(16, 5))
T = np.random.default_rng(12).normal(size=(16, 20))
W0 = np.random.default_rng(13).normal(size=(5, 20)) * 0.2
assert W0.size > SMALL  # the fused step: no per-step record of the parameters

SPEC = f"""
inputs:
  x: {{value: {literal(X)}, trainable: false}}
  t: {{value: {literal(T)}, trainable: false}}
  w: {literal(W0)}
  b: {literal(np.zeros(20))}
outputs:
  loss: mean(square(x @ w + b - t))
wrt: [b]
train:
  loss: loss
  optimizer: {{name: sgd, lr: 0.5}}
  schedule: {{step: {{every: 3, gamma: 0.5}}}}
  steps: 10
  constraints:
    b: clip(b, -0.05, 0.05)
"""
CLIP_W = "    w: clip(w, -0.3, 0.3)\n"
MAX_NORM_W = "    w: w * minimum(1.0, 0.5 / sqrt(sum(w * w)))\n"


def run(text: str):
    return runner.run(load_spec_text(text, path="fused.yaml"), backend="numpy", numeric=False)


def fused_and_loop(monkeypatch, text: str) -> tuple:
    """The run with the fused step, what each fused step left to the loop, and the same run
    with NumpyTrainee.fused_step taken away (the loop's own path)."""
    left = []
    fused = NumpyTrainee.fused_step

    def logged(self, *args):
        result = fused(self, *args)
        left.append(result[2])
        return result
    monkeypatch.setattr(NumpyTrainee, "fused_step", logged)
    with_fused = run(text).train
    monkeypatch.delattr(NumpyTrainee, "fused_step")
    return with_fused, left, run(text).train


@pytest.mark.parametrize("w_constraint", [CLIP_W, MAX_NORM_W], ids=["all-clips", "max-norm-replayed"])
def test_fused_steps_are_taken_and_bit_identical_to_the_loop(monkeypatch, w_constraint):
    # review8 T2: the fused path must be the one taken, and give the loop's bits
    train, left, loop = fused_and_loop(monkeypatch, SPEC + w_constraint)
    # all clips: the fused step does it all once the loop has built the clips (step 0's
    # constraints); a max-norm constraint is replayed by the loop at every step
    assert left == (["verdict"] + [""] * 9 if w_constraint == CLIP_W else ["verdict"] * 10)
    assert train.loss == loop.loss and train.final_loss == loop.final_loss
    for name in ("w", "b"):
        assert train.final[name].dtype == loop.final[name].dtype
        assert train.final[name].tobytes() == loop.final[name].tobytes()


@pytest.mark.parametrize("w_constraint", [CLIP_W, MAX_NORM_W], ids=["all-clips", "max-norm-replayed"])
def test_fused_steps_match_numpy(w_constraint):
    w, b, losses = W0.copy(), np.zeros(20), []
    for step in range(10):
        r = X @ w + b - T
        losses.append(np.mean(r * r))
        dr = 2 * r / r.size
        gw, gb = X.T @ dr, dr.sum(axis=0)
        lr = 0.5 * 0.5 ** (step // 3)
        w, b = w - lr * gw, b - lr * gb
        b = np.clip(b, -0.05, 0.05)
        w = np.clip(w, -0.3, 0.3) if w_constraint == CLIP_W else \
            w * min(1.0, 0.5 / np.sqrt(np.sum(w * w)))
    train = run(SPEC + w_constraint).train
    assert train.steps == 10 and train.params["w"] == []  # fused: nothing recorded per step
    np.testing.assert_allclose(train.loss, losses, rtol=1e-12)
    np.testing.assert_allclose(train.final["w"], w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(train.final["b"], b, rtol=1e-12, atol=1e-15)
    assert np.max(np.abs(train.final["b"])) == 0.05  # the clip bit
    if w_constraint == CLIP_W:
        assert np.max(np.abs(train.final["w"])) == 0.3
    else:
        np.testing.assert_allclose(np.sqrt(np.sum(train.final["w"] ** 2)), 0.5, rtol=1e-12)


def test_a_non_finite_loss_stops_the_fused_loop_at_its_step():
    # w -> w - 0.75 / w from 1: 0.25, then -2.75, whose log is NaN at step 2 (every element)
    text = "inputs:\n  w: " + literal(np.ones(100)) + """
outputs:
  loss: sum(log(w))
train:
  optimizer: {name: sgd, lr: 0.75}
  steps: 5
"""
    train = run(text).train
    w1 = 1.0 - 0.75
    w2 = w1 - 0.75 / w1
    assert train.loss[:2] == pytest.approx([0.0, 100 * math.log(w1)]) and math.isnan(train.loss[2])
    assert train.steps == 2 and train.stopped["step"] == 2
    np.testing.assert_array_equal(train.final["w"], np.full(100, w2))
    assert train.nonfinite.step == 2 and train.nonfinite.born == "nan"


def test_a_non_finite_update_is_placed_at_its_step_and_stops_at_the_next_loss():
    # the loss 1e300 * sum(w) is finite; its gradient 1e300 times lr 1e10 is not: w becomes -inf
    # at step 0's update, and step 1's loss is -inf
    text = "inputs:\n  w: " + literal(np.ones(100)) + """
outputs:
  loss: sum(w * 1e300)
train:
  optimizer: {name: sgd, lr: 1e10}
  steps: 5
"""
    with np.errstate(over="ignore"):
        lr = float(np.float32(1e10))
        w1 = np.ones(100) - lr * np.full(100, 1e300)
    assert np.all(np.isneginf(w1))
    train = run(text).train
    assert train.loss[0] == pytest.approx(1e302) and train.loss[1] == -math.inf
    assert train.steps == 1 and train.stopped["step"] == 1
    assert train.nonfinite.step == 0 and train.nonfinite.value == "-inf"
    np.testing.assert_array_equal(train.final["w"], w1)
