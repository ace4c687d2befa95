"""one_hot with an index outside [0, depth) (-1 as an "ignore" label, or >= depth) gives
tf.one_hot's row of zeros on every backend: the value and the gradient through a product with
a float tensor, both computed here by TensorFlow 2.21 itself."""
from __future__ import annotations

import os

import numpy as np
from backend_helpers import load

from gradcli import runner

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

LABELS = [[0, 2, -1], [5, 1, -7]]
Z = np.arange(1.0, 19.0).reshape(2, 3, 3) * [[[1.0], [-2.0], [0.5]]]
SPEC = f"""
inputs:
  lab: {{value: {LABELS}, dtype: int64}}
  z: {Z.tolist()}
outputs:
  y: sum(one_hot(lab, 3) * z * z)
"""


def tf_value_and_gradient(dtype):
    z = tf.constant(Z, dtype)
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = tf.reduce_sum(tf.one_hot(tf.constant(LABELS, tf.int64), 3, dtype=dtype) * z * z)
    return y.numpy(), tape.gradient(y, z).numpy()


def test_one_hot_outside_the_range_is_tensorflows_zero_row(backend):
    value, gradient = tf_value_and_gradient(tf.float64)
    # TF's zero rows: labels -1, 5 and -7 (rows [0, 2], [1, 0] and [1, 2]) pick nothing
    assert not gradient[0, 2].any() and not gradient[1, 0].any() and not gradient[1, 2].any()
    result = runner.run(load(SPEC), backend=backend, numeric=False)
    assert result.values["y"] == value
    for kind in ("overridden", "true"):
        np.testing.assert_array_equal(getattr(result.gradients["y"]["z"], kind), gradient)


def test_one_hot_outside_the_range_in_float32(backend):
    value, gradient = tf_value_and_gradient(tf.float32)
    result = runner.run(load(SPEC, dtype="float32"), backend=backend, numeric=False)
    np.testing.assert_allclose(result.values["y"], value, rtol=1e-6)
    np.testing.assert_allclose(result.gradients["y"]["z"].true, gradient, rtol=1e-6)
