"""gc.clip_by_norm, gc.clip_by_global_norm and gc.clip_by_value at their edges against
TensorFlow 2.21's own functions: zero tensors, clip_norm 0 and negative, inf and NaN entries,
per-axis norms, None entries, lo > hi. Values and gradients, NaN positions and signed zeros."""
from __future__ import annotations

import os

import numpy as np
import pytest

import gradcli as gc

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

INF, NAN = np.inf, np.nan


def assert_same(got, expected, what: str) -> None:
    """Equal, NaN where TensorFlow has NaN, and zeros of the same sign."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} vs TensorFlow {expected.shape}"
    np.testing.assert_array_equal(got, expected, err_msg=what)
    assert np.array_equal(np.signbit(got) & ~np.isnan(got), np.signbit(expected) & ~np.isnan(expected)), \
        f"{what}: signed zeros differ: {got} vs TensorFlow {expected}"


TENSORS = {"zeros": [0.0, 0.0], "inside": [0.3, 0.4], "outside": [3.0, 4.0], "inf": [INF, 1.0],
           "nan": [NAN, 1.0], "minus_inf": [-INF, -INF], "rows": [[3.0, 4.0], [0.0, 0.0]]}
CLIP_NORMS = [5.0, 1.0, 0.0, -0.0, -1.0, INF, NAN]


@pytest.mark.parametrize("clip_norm", CLIP_NORMS)
@pytest.mark.parametrize("name", sorted(TENSORS))
def test_clip_by_norm_matches_tensorflow(name, clip_norm):
    # clip_norm < 0 counts as 0 in TensorFlow: zeros (NaN where the tensor is zero or has inf)
    t = np.array(TENSORS[name])
    for axes in ([None, [1], [0]] if t.ndim == 2 else [None]):
        expected = tf.clip_by_norm(tf.constant(t), clip_norm, axes=axes).numpy()
        got = gc.evaluate(gc.clip_by_norm(gc.constant(t), clip_norm, axes=axes))
        assert_same(got, expected, f"clip_by_norm({t.tolist()}, {clip_norm}, axes={axes})")
        # a clip_norm given as a tensor goes through a maximum op in TensorFlow
        expected = tf.clip_by_norm(tf.constant(t), tf.constant(clip_norm, tf.float64), axes=axes)
        got = gc.evaluate(gc.clip_by_norm(gc.constant(t), gc.constant(clip_norm), axes=axes))
        np.testing.assert_array_equal(got, expected.numpy(), err_msg=f"tensor clip_norm {clip_norm}")


def test_clip_by_norm_with_a_negative_bound_gives_zeros():
    got = gc.evaluate(gc.clip_by_norm(gc.constant([3.0, 4.0]), -1.0))
    assert_same(got, [0.0, 0.0], "clip_by_norm(t, -1)")


@pytest.mark.parametrize("clip_norm", [5.0, 0.5, -1.0])
def test_clip_by_norm_gradient_matches_tensorflow(clip_norm):
    for t in ([3.0, 4.0], [0.0, 0.0], [0.3, 0.4]):
        x = tf.constant(np.array(t))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.clip_by_norm(x, clip_norm)
        dy = np.array([1.0, -2.0])
        expected = tape.gradient(y, x, output_gradients=tf.constant(dy)).numpy()
        xc = gc.constant(t)
        (got,) = gc.gradients(gc.clip_by_norm(xc, clip_norm), [xc], grad_ys=[dy])
        np.testing.assert_allclose(gc.evaluate(got), expected, rtol=1e-14, atol=0,
                                   err_msg=f"d clip_by_norm({t}, {clip_norm})")


LISTS = {"finite": [[3.0, 4.0], [12.0]], "zeros": [[0.0], [0.0, 0.0]], "inf": [[INF], [1.0]],
         "nan": [[NAN], [1.0]], "none_entry": [[3.0, 4.0], None]}


@pytest.mark.parametrize("clip_norm", [5.0, 1.0, 0.0, -1.0, INF, NAN])
@pytest.mark.parametrize("name", sorted(LISTS))
def test_clip_by_global_norm_matches_tensorflow(name, clip_norm):
    # an infinite or NaN global norm turns every entry into NaN; None entries stay None
    entries = LISTS[name]
    expected, expected_norm = tf.clip_by_global_norm(
        [None if e is None else tf.constant(np.array(e)) for e in entries],
        tf.constant(clip_norm, tf.float64))
    got, norm = gc.clip_by_global_norm([None if e is None else gc.constant(e) for e in entries],
                                       clip_norm)
    assert [g is None for g in got] == [e is None for e in expected]
    for g, e in zip(got, expected):
        if e is not None:
            assert_same(gc.evaluate(g), e.numpy(), f"clip_by_global_norm({entries}, {clip_norm})")
    assert_same(gc.evaluate(norm), expected_norm.numpy(), "global norm")


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (1.0, 0.0), (NAN, 1.0), (0.0, NAN), (-INF, INF)])
def test_clip_by_value_matches_tensorflow(lo, hi):
    x = np.array([-2.0, 0.5, 3.0, NAN, -INF, INF, 0.0, 1.0])
    xt, lt, ht = (tf.constant(np.asarray(v, dtype=np.float64)) for v in (x, lo, hi))
    with tf.GradientTape() as tape:
        tape.watch([xt, lt, ht])
        y = tf.clip_by_value(xt, lt, ht)
    dy = np.arange(1.0, 9.0)
    expected = tape.gradient(y, [xt, lt, ht], output_gradients=tf.constant(dy))
    xc, lc, hc = gc.constant(x), gc.constant(lo), gc.constant(hi)
    yc = gc.clip_by_value(xc, lc, hc)
    assert_same(gc.evaluate(yc), y.numpy(), f"clip_by_value(x, {lo}, {hi})")
    for name, g, e in zip("x lo hi".split(), gc.gradients(yc, [xc, lc, hc], grad_ys=[dy]), expected):
        assert_same(gc.evaluate(g), e.numpy(), f"d clip_by_value / d{name} ({lo}, {hi})")
