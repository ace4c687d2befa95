"""The core's values and gradients at the edges (0, negatives, inf, NaN, overflow) against
TensorFlow 2.21's own kernels: tf.GradientTape on the same expression, in float64.

Non-finite numbers must sit where TensorFlow's do (NaN, +inf, -inf, and zeros); finite ones
agree to 1e-12: TensorFlow's Eigen exp, log and pow round a few values one ulp apart from
numpy's. Subnormal inputs are left out: TensorFlow's CPU kernels flush them to zero.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import gradcli as gc

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

INF, NAN = np.inf, np.nan
EDGES = np.array([-INF, -1.0, -0.0, 0.0, 0.5, 1.0, 800.0, INF, NAN])
PAIRS = np.array([-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, INF, NAN])
UPSTREAM = (0.0, 1.0, 0.7)


def assert_tf_equal(got, expected, what: str) -> None:
    """Same shape, NaN/inf/zero in the same places (signs of infinities too), finite within 1e-12."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} vs TensorFlow {expected.shape}"

    def kind(a):
        return np.where(np.isnan(a), 3, np.where(np.isposinf(a), 2, np.where(np.isneginf(a), -2,
                                                                              np.where(a == 0, 0, 1))))

    bad = kind(got) != kind(expected)
    finite = np.isfinite(got) & np.isfinite(expected)
    bad |= finite & ~np.isclose(got, expected, rtol=1e-12, atol=0)
    assert not bad.any(), (f"{what}: at {np.flatnonzero(bad)[:8]} gradcli gives {got[bad][:8]}, "
                           f"TensorFlow {expected[bad][:8]}")


def tf_run(fn, inputs, dy):
    """TensorFlow's value and gradient of fn(*inputs) with upstream gradient dy (broadcast)."""
    ts = [tf.constant(np.asarray(x, dtype=np.float64)) for x in inputs]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        y = fn(*ts)
    seed = tf.constant(np.broadcast_to(np.asarray(dy, dtype=np.float64), y.shape).copy())
    grads = tape.gradient(y, ts, output_gradients=seed)
    return y.numpy(), [None if g is None else g.numpy() for g in grads]


def gc_run(fn, inputs, dy):
    """The core's value and gradient of fn(*inputs) with upstream gradient dy."""
    ts = [gc.constant(np.asarray(x, dtype=np.float64)) for x in inputs]
    y = fn(*ts)
    grads = gc.gradients(y, ts, grad_ys=[np.broadcast_to(np.asarray(dy, float), y.shape).copy()])
    return gc.evaluate(y), [None if g is None else gc.evaluate(g) for g in grads]


def check(name, tf_fn, gc_fn, inputs, dy):
    tf_value, tf_grads = tf_run(tf_fn, inputs, dy)
    value, grads = gc_run(gc_fn, inputs, dy)
    assert_tf_equal(value, tf_value, f"{name} value")
    for i, (got, expected) in enumerate(zip(grads, tf_grads)):
        assert (got is None) == (expected is None), f"{name} d/dinput{i}: {got} vs TF {expected}"
        if expected is not None:
            assert_tf_equal(got, expected, f"{name} d/dinput{i} (dy={dy})")


UNARY = {
    "sqrt": (tf.sqrt, gc.sqrt), "reciprocal": (tf.math.reciprocal, gc.reciprocal),
    "log": (tf.math.log, gc.log), "exp": (tf.exp, gc.exp), "softplus": (tf.math.softplus, gc.softplus),
    "sigmoid": (tf.sigmoid, gc.sigmoid), "tanh": (tf.tanh, gc.tanh), "abs": (tf.abs, gc.abs),
    "relu": (tf.nn.relu, gc.relu), "square": (tf.square, gc.square), "sin": (tf.sin, gc.sin),
    "cos": (tf.cos, gc.cos), "neg": (tf.negative, gc.neg), "sign": (tf.sign, gc.sign),
}


@pytest.mark.parametrize("dy", UPSTREAM)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_at_their_edges_match_tensorflow(name, dy):
    # sqrt and reciprocal: TensorFlow's kernels give 0 where dy is 0, even at x <= 0 or NaN
    check(name, *UNARY[name], [EDGES], dy)


BINARY = {
    "div": (tf.math.truediv, gc.div), "pow": (tf.pow, gc.pow), "mul": (tf.multiply, gc.mul),
    "add": (tf.add, gc.add), "sub": (tf.subtract, gc.sub), "maximum": (tf.maximum, gc.maximum),
    "minimum": (tf.minimum, gc.minimum),
}


@pytest.mark.parametrize("dy", UPSTREAM)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_on_a_grid_of_edges_match_tensorflow(name, dy):
    x, y = (a.ravel() for a in np.meshgrid(PAIRS, PAIRS, indexing="ij"))
    check(name, *BINARY[name], [x, y], dy)


def _masked(tf_fn, gc_fn):
    """where(x > 0, f(x), 0): the branch not taken gets a zero upstream gradient."""
    return (lambda x: tf.where(x > 0, tf_fn(x), tf.constant(0.0, tf.float64)),
            lambda x: gc.where(x > 0, gc_fn(x), 0.0))


MASKED = {
    "sqrt": _masked(tf.sqrt, gc.sqrt),
    "reciprocal": _masked(tf.math.reciprocal, gc.reciprocal),
    "log": _masked(tf.math.log, gc.log),
    "one_over": _masked(lambda x: 1.0 / x, lambda x: 1.0 / x),
    "pow_half": _masked(lambda x: x ** 0.5, lambda x: x ** 0.5),
    "exp_overflow": (lambda x: tf.where(x < 700, tf.exp(x), tf.constant(0.0, tf.float64)),
                     lambda x: gc.where(x < 700, gc.exp(x), 0.0)),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_the_branch_where_did_not_take_gets_tensorflows_gradient(name):
    # at x = -1 and 0: 0 through sqrt and reciprocal, NaN through log, / and pow (as in TF)
    check(f"where(x > 0, {name}(x), 0)", *MASKED[name], [EDGES], 1.0)


def test_masked_sqrt_is_zero_not_nan_at_minus_one_and_zero():
    x = gc.constant([-1.0, 0.0, 4.0])
    (g,) = gc.gradients(gc.sum(gc.where(x > 0, gc.sqrt(x), 0.0)), [x])
    np.testing.assert_array_equal(gc.evaluate(g), [0.0, 0.0, 0.25])


ROWS = [[1.0, 2.0, 3.0], [-INF, -INF, -INF], [INF, 1.0, 2.0], [NAN, 1.0, 2.0], [INF, INF, 1.0],
        [-INF, 0.0, 1.0], [0.0, 0.0, 0.0], [1e308, 1e308, 1.0], [1e17, 1e17, 0.0],
        [-1000.0, -1000.0, -1000.0]]
REDUCTIONS = {
    "logsumexp": (tf.reduce_logsumexp, gc.logsumexp), "max": (tf.reduce_max, gc.max),
    "min": (tf.reduce_min, gc.min), "prod": (tf.reduce_prod, gc.prod),
    "mean": (tf.reduce_mean, gc.mean), "sum": (tf.reduce_sum, gc.sum),
}


@pytest.mark.parametrize("dy", UPSTREAM)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_of_edge_rows_match_tensorflow(name, dy):
    tf_fn, gc_fn = REDUCTIONS[name]
    for row in ROWS:
        check(f"{name}({row})", tf_fn, gc_fn, [row], dy)
        check(f"{name}({row}, axis=1, keepdims)", lambda x: tf_fn(x, axis=1, keepdims=True),
              lambda x: gc_fn(x, axis=1, keepdims=True), [[row, row[::-1]]], dy)


def test_logsumexp_gradient_keeps_the_log_of_the_sum_at_large_values():
    # exp(x - logsumexp(x)) rounds logsumexp(1e17, 1e17) = 1e17 + log 2 to 1e17: gradient 1, not 1/2
    x = gc.constant([1e17, 1e17, 0.0])
    (g,) = gc.gradients(gc.logsumexp(x), [x])
    np.testing.assert_array_equal(gc.evaluate(g), [0.5, 0.5, 0.0])


@pytest.mark.parametrize("upstream", [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.3, -1.0, 2.0]])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_edge_rows_matches_tensorflow(name, upstream):
    tf_fn, gc_fn = getattr(tf.nn, name), getattr(gc, name)
    for row in ROWS:
        check(f"{name}({row})", tf_fn, gc_fn, [row], upstream)


CLIP_BOUNDS = [(0.0, 1.0), (1.0, 0.0), (NAN, 1.0), (0.0, NAN), (1.0, 1.0), (-INF, INF)]


@pytest.mark.parametrize("lo, hi", CLIP_BOUNDS)
def test_clip_matches_tf_clip_by_value_with_lo_above_hi_and_nan(lo, hi):
    # tf.clip_by_value is maximum(minimum(x, hi), lo): lo where lo > hi, and a NaN x sends dy to lo
    x = np.array([-2.0, 0.5, 3.0, NAN, -INF, INF, 0.0, 1.0])
    check(f"clip(x, {lo}, {hi})", tf.clip_by_value, gc.clip, [x, lo, hi], np.arange(1.0, 9.0))


def test_clip_with_lo_above_hi_gives_lo():
    np.testing.assert_array_equal(gc.evaluate(gc.clip(gc.constant([-2.0, 0.5, 3.0]), 1.0, 0.0)),
                                  [1.0, 1.0, 1.0])


def _second(tf_fn, gc_fn, x, dy):
    """d/dx of sum(dy * d f/dx): TensorFlow's SqrtGradGrad and ReciprocalGradGrad."""
    xt = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(xt)
        with tf.GradientTape() as inner:
            inner.watch(xt)
            y = tf_fn(xt)
        g = inner.gradient(y, xt, output_gradients=tf.constant(dy))
    expected = outer.gradient(g, xt)
    xc = gc.constant(x)
    (gx,) = gc.gradients(gc_fn(xc), [xc], grad_ys=[dy])
    (got,) = gc.gradients(gx, [xc])
    return gc.evaluate(got), expected.numpy()


@pytest.mark.parametrize("name", ["sqrt", "reciprocal"])
def test_second_derivatives_through_the_new_kernels_match_tensorflow(name):
    tf_fn, gc_fn = MASKED[name]
    x = np.array([-1.0, 0.0, 0.25, 2.0, 9.0])
    got, expected = _second(tf_fn, gc_fn, x, np.array([1.0, 1.0, 1.0, -2.0, 0.5]))
    assert_tf_equal(got, expected, f"second derivative of where(x > 0, {name}(x), 0)")
    got, expected = _second(*UNARY[name], np.array([0.25, 2.0, 9.0]), np.array([1.0, -2.0, 0.0]))
    assert_tf_equal(got, expected, f"second derivative of {name}")
