"""Constraints on the numpy core, both ways it evaluates them: one op over leaves (clip(b, lo,
hi), the op's kernel called directly) and a composite expression (a max-norm rescale, replayed),
in the same run, against the training loop written out in numpy here."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli import runner
from gradcli.spec import load_spec_text


def literal(a) -> str:
    return repr(np.asarray(a).tolist())


X = np.random.default_rng(5).normal(size=(6, 3))
T = np.random.default_rng(6).normal(size=(6, 2)) * 3
W0 = np.random.default_rng(7).normal(size=(3, 2))

SPEC = f"""
inputs:
  x: {{value: {literal(X)}, trainable: false}}
  t: {{value: {literal(T)}, trainable: false}}
  w: {literal(W0)}
  b: [0.0, 0.0]
outputs:
  loss: sum(square(x @ w + b - t))
wrt: [w]
train:
  loss: loss
  optimizer: {{name: sgd, lr: 0.0625}}
  steps: 6
  constraints:
    b: clip(b, -0.1, 0.1)
"""
MAX_NORM = "    w: w * minimum(1.0, 0.5 / sqrt(sum(w * w)))\n"


@pytest.mark.parametrize("max_norm", [False, True], ids=["clip-only-direct", "with-max-norm-replayed"])
def test_direct_and_replayed_constraints_match_numpy(max_norm):
    w, b, losses = W0.copy(), np.zeros(2), []
    for _ in range(6):
        r = X @ w + b - T
        losses.append(np.sum(r * r))
        gw, gb = 2 * X.T @ r, 2 * r.sum(axis=0)
        w, b = w - 0.0625 * gw, b - 0.0625 * gb
        b = np.clip(b, -0.1, 0.1)
        if max_norm:
            w = w * min(1.0, 0.5 / np.sqrt(np.sum(w * w)))
    spec = SPEC + (MAX_NORM if max_norm else "")
    train = runner.run(load_spec_text(spec, path="c.yaml"), backend="numpy").train
    np.testing.assert_allclose(train.loss, losses, rtol=1e-12)
    np.testing.assert_allclose(train.final["w"], w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(train.final["b"], b, rtol=1e-12, atol=1e-15)
    assert np.all(np.abs(train.final["b"]) == 0.1)  # the clip bit
    if max_norm:
        np.testing.assert_allclose(np.sqrt(np.sum(train.final["w"] ** 2)), 0.5, rtol=1e-12)


def test_clips_of_their_own_variables_keep_every_step_apart():
    """Both variables clipped by constant bounds (clipped in place on the update's new values):
    each step's recorded values are that step's, none changed by a later step's clip, and the
    spec's own starting values are untouched."""
    w, b, ws, bs = W0.copy(), np.zeros(2), [], []
    for _ in range(6):
        r = X @ w + b - T
        gw, gb = 2 * X.T @ r, 2 * r.sum(axis=0)
        w = np.clip(w - 0.0625 * gw, -0.3, 0.3)
        b = np.clip(b - 0.0625 * gb, -0.1, 0.1)
        ws.append(w)
        bs.append(b)
    spec = SPEC + "    w: clip(w, -0.3, 0.3)\n"
    experiment = load_spec_text(spec, path="c.yaml")
    train = runner.run(experiment, backend="numpy").train
    np.testing.assert_allclose(np.array(train.params["w"]), np.array(ws), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.array(train.params["b"]), np.array(bs), rtol=1e-12, atol=1e-15)
    assert np.any(np.abs(np.array(train.params["w"])) == 0.3)  # the clip bit, on the history
    np.testing.assert_array_equal(experiment.inputs["w"].value, W0)


def test_a_clip_whose_bounds_grow_the_variable_is_a_placed_error():
    """Bounds of a larger shape than the variable: not clipped in place (numpy would refuse the
    output operand), but the constraint's own spec error, at its line."""
    from gradcli.errors import SpecError

    spec = SPEC.replace("b: clip(b, -0.1, 0.1)", "b: clip(b, [[-0.1, -0.1], [-0.2, -0.2]], 0.1)")
    experiment = load_spec_text(spec, path="c.yaml")
    with pytest.raises(SpecError) as info:
        runner.run(experiment, backend="numpy")
    assert "train.constraints.b gives shape (2, 2)" in str(info.value)
    assert "c.yaml:" in str(info.value)


def test_a_clip_with_bounds_per_element_beside_an_unclipped_variable():
    """b clipped by bounds of its own shape (one min/max pair over all the flat update's new
    values, w's part between -inf and +inf): w as the unclipped loop's, b's elements each at
    their own bound."""
    lo, hi = np.array([-0.1, -0.02]), np.array([0.05, 0.1])
    w, b = W0.copy(), np.zeros(2)
    for _ in range(6):
        r = X @ w + b - T
        gw, gb = 2 * X.T @ r, 2 * r.sum(axis=0)
        w, b = w - 0.0625 * gw, np.clip(b - 0.0625 * gb, lo, hi)
    spec = SPEC.replace("b: clip(b, -0.1, 0.1)", f"b: clip(b, {literal(lo)}, {literal(hi)})")
    train = runner.run(load_spec_text(spec, path="c.yaml"), backend="numpy").train
    np.testing.assert_allclose(train.final["w"], w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(train.final["b"], b, rtol=1e-12, atol=1e-15)
    assert np.all((train.final["b"] == lo) | (train.final["b"] == hi))  # the clip bits
