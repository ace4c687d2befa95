"""gc.gradient_override_map cannot reach grad_pass_through, as TensorFlow's cannot: there
tf.grad_pass_through is a custom_gradient, not an op type (tryout10 F0: the spec's override_map
now refuses the entry; the core's scope applied it, zeroing the pass-through gradient).

Oracle: TensorFlow's own grad_pass_through under a GradientTape, called here.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import gradcli as gc
from gradcli.core.registry import OverrideUnusedWarning

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

X = np.array([0.4, -1.6, 2.5])


def tensorflows_gradient() -> np.ndarray:
    x = tf.Variable(X)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.grad_pass_through(tf.round)(x) * x)
    return tape.gradient(y, x).numpy()


@pytest.mark.parametrize("key", ["grad_pass_through", "GradPassThrough"])
def test_an_override_scope_does_not_reach_grad_pass_through(key):
    expected = tensorflows_gradient()
    np.testing.assert_array_equal(expected, np.round(X) + X)  # round(2.5) is 2, as numpy's
    x = gc.variable(X.copy())
    with pytest.warns(OverrideUnusedWarning, match=f"'{key}' is not an op type"):
        with gc.gradient_override_map({key: "zero", "round": "identity"}):
            y = gc.sum(gc.grad_pass_through(gc.round)(x) * x)
    (grad,) = gc.evaluate(gc.gradients(y, [x]))
    np.testing.assert_array_equal(grad, expected)


def test_an_entry_for_an_op_type_inside_still_applies():
    # round inside the pass-through is an op type: its override is claimed (and counted), the
    # pass-through's identity is what reaches x either way
    x = gc.variable(X.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with gc.gradient_override_map({"Round": "identity"}) as scope:
            y = gc.sum(gc.grad_pass_through(gc.round)(x) * x)
    assert scope.unused == []
    (grad,) = gc.evaluate(gc.gradients(y, [x]))
    np.testing.assert_array_equal(grad, tensorflows_gradient())
