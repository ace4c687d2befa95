"""The true gradient through comparisons and casts from bool (a Heaviside step): connected,
zero almost everywhere, as for sign and round; the overridden gradient keeps TensorFlow's None."""
from __future__ import annotations

import os

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import UnconnectedGradientError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

X = [-1.0, 0.0, 0.5, 2.0]


def heaviside(x):
    return gc.sum(gc.cast(x > 0, gc.dtype(x)))


def test_tensorflow_gives_no_gradient_through_a_comparison():
    # the reference for the overridden column: tf.cast(x > 0) has no gradient in TensorFlow
    x = tf.constant(np.array(X))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x > 0, tf.float64))
    assert tape.gradient(y, x) is None
    xc = gc.constant(X)
    assert gc.gradients(heaviside(xc), [xc]) == [None]


@pytest.mark.parametrize("unconnected", ["none", "zero", "error"])
def test_true_gradient_of_a_step_is_zeros_whatever_unconnected_says(unconnected):
    x = gc.constant(X)
    (g,) = gc.true_gradients(heaviside(x), [x], unconnected_gradients=unconnected)
    assert g is not None
    np.testing.assert_array_equal(gc.evaluate(g), np.zeros(4))


@pytest.mark.parametrize("build", [
    lambda x: gc.sum(gc.where(x > 0, 1.0, 0.0)),                        # where on a comparison
    lambda x: gc.sum(gc.cast(gc.logical_and(x > -1, x < 1), gc.dtype(x))),  # logical ops
    lambda x: gc.sum(gc.cast(gc.max_with_argmax(x, 0)[1], gc.dtype(x))),    # an integer index
    lambda x: gc.sum(gc.cast(gc.cast(x * 2, "int64"), gc.dtype(x))),         # a cast to int
])
def test_true_gradient_through_other_steps_is_zeros(build):
    x = gc.constant(X)
    (g,) = gc.true_gradients(build(x), [x])
    np.testing.assert_array_equal(gc.evaluate(g), np.zeros(4))


def test_a_step_beside_a_smooth_path_adds_nothing():
    x, w = gc.constant(X), gc.constant([1.0, 2.0, 3.0, 4.0])
    y = gc.sum(w * gc.cast(x > 0, gc.dtype(x)) + x * x)
    gx, gw = gc.true_gradients(y, [x, w])
    np.testing.assert_array_equal(gc.evaluate(gx), 2 * np.array(X))
    np.testing.assert_array_equal(gc.evaluate(gw), [0.0, 0.0, 1.0, 1.0])


def test_inputs_the_output_does_not_depend_on_stay_unconnected():
    x, other = gc.constant(X), gc.constant(1.0)
    assert gc.true_gradients(heaviside(x), [other]) == [None]
    with pytest.raises(UnconnectedGradientError):
        gc.true_gradients(heaviside(x), [other], unconnected_gradients="error")
    # grad_pass_through routes dy into `other`, but the forward value never reads it
    routed = gc.grad_pass_through(lambda v, u: gc.sum(gc.cast(v > 0, gc.dtype(v))))(x, other)
    assert gc.true_gradients(routed, [other]) == [None]
    np.testing.assert_array_equal(gc.evaluate(gc.true_gradients(routed, [x])[0]), np.zeros(4))


def test_a_stopped_step_input_is_not_reached():
    x = gc.constant(X)
    h = x * 1.0
    assert gc.true_gradients(heaviside(h), [x], stop_gradients=[h]) == [None]
