"""Clipping with TensorFlow's formulas, and the tf.train-style optimizers against TF1's updates."""
from __future__ import annotations

import numpy as np
import pytest
from core_helpers import assert_close, check_gradients, uids_used

import gradcli as gc
from gradcli.errors import GradientError, GraphError


# ----- clip_by_value -----
def test_clip_by_value_values_and_gradient():
    t = gc.variable([-3.0, -0.5, 0.5, 4.0])
    c = gc.clip_by_value(t, -1.0, 2.0)
    assert_close(c.numpy(), [-1.0, -0.5, 0.5, 2.0])
    assert_close(gc.gradients(gc.sum(c), t)[0].numpy(), [0, 1, 1, 0])
    lo, hi = gc.variable([-1.0, -1.0, 0.0, 0.0]), gc.variable(2.0)
    c = gc.clip_by_value(t, lo, hi)
    assert_close(c.numpy(), [-1.0, -0.5, 0.5, 2.0])
    glo, ghi = gc.gradients(gc.sum(c), [lo, hi])
    assert_close(glo.numpy(), [1, 0, 0, 0])
    assert ghi.numpy() == 1.0


# ----- clip_by_norm -----
def test_clip_by_norm_scales_down_only_above_the_limit():
    t = gc.variable([3.0, 4.0])
    assert_close(gc.clip_by_norm(t, 2.5).numpy(), [1.5, 2.0])
    assert_close(gc.clip_by_norm(t, 10.0).numpy(), [3.0, 4.0])
    assert_close(gc.clip_by_norm(t, 5.0).numpy(), [3.0, 4.0])


def test_clip_by_norm_over_axes():
    t = gc.variable([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    assert_close(gc.clip_by_norm(t, 1.0, axes=[1]).numpy(),
                 [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    assert_close(gc.clip_by_norm(t, 1.0, axes=0).numpy(),
                 np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
                 / np.array([np.hypot(3.0, 0.3), np.hypot(4.0, 0.4)]))
    assert_close(gc.clip_by_norm(t, 1.0).numpy(), t.numpy() / np.sqrt(25.25))


def test_clip_by_norm_leaves_an_all_zero_tensor_unchanged_with_a_finite_gradient():
    t = gc.variable(np.zeros(3))
    c = gc.clip_by_norm(t, 1.0)
    assert_close(c.numpy(), np.zeros(3), rtol=0, atol=0)
    (g,) = gc.gradients(gc.sum(c), t)
    assert np.all(np.isfinite(g.numpy()))
    assert_close(g.numpy(), np.ones(3))


def test_clip_by_norm_gradient_matches_central_differences(rng):
    t = gc.variable(rng.normal(size=(2, 3)) * 3)
    check_gradients(gc.clip_by_norm(t, 1.5), [t], rng)
    check_gradients(gc.clip_by_norm(t, 1.5, axes=[1]), [t], rng)


def test_clip_by_norm_needs_a_scalar_limit():
    with pytest.raises(GraphError, match=r"clip_norm of shape \(2, 2\) would broadcast a tensor "
                                         r"of shape \(2,\); give a scalar"):
        gc.clip_by_norm(gc.variable([1.0, 2.0]), np.ones((2, 2)))


# ----- global_norm and clip_by_global_norm -----
def test_global_norm_skips_none():
    assert_close(gc.global_norm([gc.constant([3.0]), None, gc.constant([[4.0, 12.0]])]).numpy(), 13.0)
    with pytest.raises(GraphError, match="at least one tensor that is not None"):
        gc.global_norm([None, None])


def test_clip_by_global_norm():
    a, b = gc.variable([3.0, 0.0]), gc.variable([[4.0]])
    clipped, norm = gc.clip_by_global_norm([a, None, b], 2.5)
    assert norm.numpy() == 5.0
    assert clipped[1] is None
    assert_close(clipped[0].numpy(), [1.5, 0.0])
    assert_close(clipped[2].numpy(), [[2.0]])
    unclipped, _ = gc.clip_by_global_norm([a, b], 6.0)
    assert_close(unclipped[0].numpy(), [3.0, 0.0])
    # use_norm replaces the computed norm (a number takes the tensors' dtype)
    halved, used = gc.clip_by_global_norm([a, b], 5.0, use_norm=10.0)
    assert used.numpy() == 10.0
    assert_close(halved[0].numpy(), [1.5, 0.0])
    f32, n32 = gc.clip_by_global_norm([gc.constant([3.0, 4.0], dtype="float32")], 1.0, use_norm=5.0)
    assert f32[0].dtype == np.float32 and n32.dtype == np.float32
    assert_close(f32[0].numpy(), [0.6, 0.8], rtol=1e-6)


def test_clip_by_global_norm_turns_everything_nan_when_the_norm_is_not_finite():
    a, b = gc.variable([1.0, np.inf]), gc.variable([2.0])
    clipped, norm = gc.clip_by_global_norm([a, b], 1.0)
    assert np.isinf(norm.numpy())
    assert np.all(np.isnan(clipped[0].numpy())) and np.all(np.isnan(clipped[1].numpy()))
    a.assign([1.0, np.nan])
    assert np.all(np.isnan(clipped[1].numpy()))
    a.assign([3.0, 4.0])  # finite again: the same graph gives numbers again
    assert_close(clipped[1].numpy(), [2.0 / np.sqrt(29.0)])


def test_clip_by_global_norm_gradient_matches_central_differences(rng):
    a, b = gc.variable(rng.normal(size=3)), gc.variable(rng.normal(size=(2, 2)))
    clipped, _ = gc.clip_by_global_norm([a, b], 0.7)
    check_gradients(gc.concat([clipped[0], gc.reshape(clipped[1], (-1,))]), [a, b], rng)


# ----- optimizers -----
def test_compute_gradients_defaults_to_the_trainable_variables_in_creation_order():
    frozen = gc.variable(5.0, trainable=False)
    w, x = gc.variable(2.0), gc.variable(3.0)
    loss = x * x * w * frozen
    pairs = gc.train.GradientDescentOptimizer(0.1).compute_gradients(loss)
    assert [v for _, v in pairs] == [w, x]
    assert gc.evaluate([g for g, _ in pairs]) == [45.0, 60.0]
    with pytest.raises(GradientError, match="var_list holds .* which is not a variable; make it "
                                            "with gc.variable"):
        gc.train.GradientDescentOptimizer(0.1).compute_gradients(loss, [w * 1.0])


def test_apply_gradients_updates_all_variables_from_the_same_values():
    w, x = gc.variable(2.0), gc.variable(3.0)
    opt = gc.train.GradientDescentOptimizer(1.0)
    opt.apply_gradients(opt.compute_gradients(w * x))
    assert (w.numpy(), x.numpy()) == (-1.0, 1.0)  # not x = 3 - (-1) from an updated w


def test_apply_gradients_skips_none_and_refuses_all_none():
    w, unused = gc.variable(1.0), gc.variable(7.0)
    opt = gc.train.GradientDescentOptimizer(0.5)
    pairs = opt.compute_gradients(w * w, [w, unused])
    assert pairs[1][0] is None
    opt.apply_gradients(pairs)
    assert (w.numpy(), unused.numpy()) == (0.0, 7.0)
    with pytest.raises(GradientError, match="no gradients provided for any variable"):
        opt.apply_gradients([(None, unused)])


def test_minimize_builds_the_gradient_graph_once():
    w = gc.variable([0.0, 1.0])
    target = gc.constant([3.0, -1.0])
    loss = gc.sum((w - target) ** 2)
    opt = gc.train.GradientDescentOptimizer(0.25)
    first = uids_used(lambda: opt.minimize(loss))
    assert first > 0
    assert uids_used(lambda: opt.minimize(loss)) == 0  # replayed, not rebuilt
    assert uids_used(lambda: opt.minimize(loss, var_list=iter([w]))) > 0  # a new var_list builds anew
    assert uids_used(lambda: [opt.minimize(loss, var_list=[w]) for _ in range(2)]) == 0
    # each step halves the distance to the target
    assert_close(w.numpy(), np.array([3.0, -1.0]) + np.array([-3.0, 2.0]) * 0.5 ** 5)


def test_float32_variables_stay_float32_when_trained():
    w = gc.variable([1.0, -2.0], dtype="float32")
    for opt in (gc.train.GradientDescentOptimizer(0.1), gc.train.MomentumOptimizer(0.1, 0.9),
                gc.train.AdamOptimizer(0.1)):
        opt.minimize(gc.sum(w * w))
        assert w.dtype == np.float32 and w.numpy().dtype == np.float32


def _quadratic():
    """loss = sum(c * w^2) + w0 * w1, whose gradient is 2 c w + (w1, w0)."""
    c = np.array([1.0, 2.5])
    w = gc.variable([1.0, -2.0])
    loss = gc.sum(gc.constant(c) * w * w) + w[0] * w[1]

    def grad(v):
        return 2 * c * v + v[::-1]

    return w, loss, grad


def f32(value: float) -> float:
    """A Python-float hyper-parameter as tf.train applies it: a float32 tensor cast to float64."""
    return float(np.float32(value))


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_tensorflow_1_over_three_steps(nesterov):
    w, loss, grad = _quadratic()
    opt = gc.train.MomentumOptimizer(0.1, momentum=0.9, use_nesterov=nesterov)
    lr, mu = f32(0.1), f32(0.9)
    value, accum = np.array([1.0, -2.0]), np.zeros(2)
    for _ in range(3):
        opt.minimize(loss)
        g = grad(value)
        accum = accum * mu + g  # ApplyMomentum, in the kernel's order
        value = value - ((g * lr + accum * mu * lr) if nesterov else accum * lr)
        assert_close(w.numpy(), value, rtol=1e-15, atol=0)


def test_momentum_first_step_by_hand():
    w, loss, _ = _quadratic()
    opt = gc.train.MomentumOptimizer(0.1, momentum=0.9)
    opt.minimize(loss)  # g = (2*1 - 2, 2*2.5*(-2) + 1) = (0, -9)
    assert_close(w.numpy(), [1.0, -1.1])
    opt.minimize(loss)  # g = (2 - 1.1, -5.5 + 1) = (0.9, -4.5); accum = (0.9, -12.6)
    assert_close(w.numpy(), [1.0 - 0.09, -1.1 + 1.26])


def test_adam_matches_tensorflow_1_over_three_steps():
    w, loss, grad = _quadratic()
    # a large epsilon tells TF1's placement apart
    opt = gc.train.AdamOptimizer(0.05, beta1=0.8, beta2=0.9, epsilon=0.1)
    lr, b1, b2, eps = f32(0.05), f32(0.8), f32(0.9), f32(0.1)
    b1_power, b2_power = np.float32(0.8), np.float32(0.9)  # AdamOptimizer's float32 accumulators
    value, m, v = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2)
    for t in (1, 2, 3):
        opt.minimize(loss)
        g = grad(value)
        lr_t = lr * np.sqrt(1 - float(b2_power)) / (1 - float(b1_power))  # ApplyAdam's order
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        value = value - (m * lr_t) / (np.sqrt(v) + eps)
        b1_power, b2_power = b1_power * np.float32(0.8), b2_power * np.float32(0.9)
        assert_close(w.numpy(), value, rtol=1e-15, atol=0)
        if t == 1:  # g = (0, -9): TF1 puts eps on the uncorrected sqrt(v), the paper on sqrt(v_hat)
            assert_close(w.numpy()[1], -2.0 + lr * 9.0 / (9.0 + eps / np.sqrt(1 - b2)), rtol=1e-12)
            assert not np.isclose(w.numpy()[1], -2.0 + lr * 9.0 / (9.0 + eps), rtol=1e-9)


def test_adam_first_step_moves_each_coordinate_by_the_learning_rate():
    w = gc.variable([1.0, -2.0, 0.5])
    opt = gc.train.AdamOptimizer(0.01)
    opt.minimize(gc.sum(w * gc.constant([3.0, -4.0, 0.001])))
    assert_close(w.numpy(), [1.0 - 0.01, -2.0 + 0.01, 0.5 - 0.01 * (0.001 / (0.001 + 1e-8 / 0.0316227766))],
                 rtol=1e-6)
    assert opt.iterations == 1
