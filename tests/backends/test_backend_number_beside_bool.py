"""A bare number whose only neighbour is a boolean takes the spec's dtype on every backend:
`where(c, 1.0, 0.0)` in a float32 spec is float32, as tf.where(c, 1.0, 0.0) is (TensorFlow
called here is the oracle); a float tensor beside it sets it, as in tf.where(c, x, 0.0)."""
from __future__ import annotations

import numpy as np
import tensorflow as tf

from gradcli import runner
from gradcli.spec import load_spec_text

X = [-2.0, 0.5, 1.5, 1.0]
SPEC = ("dtype: float32\n"
        f"inputs:\n  x: {X}\n"
        "outputs:\n"
        "  mask: where(abs(x) <= 1, 1.0, 0.0)\n"
        "  y: sum(where(abs(x) <= 1, 1.0, 0.0) * x * x)\n"
        "  z: sum(where(x > 0, x, 0.0))\n")


def test_where_of_two_bare_numbers_has_the_spec_dtype_as_in_tensorflow(backend):
    x = tf.constant(X, dtype=tf.float32)
    mask = tf.where(tf.abs(x) <= 1, 1.0, 0.0)
    beside = tf.where(x > 0, x, 0.0)
    assert mask.dtype == tf.float32 and beside.dtype == tf.float32
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.where(tf.abs(x) <= 1, 1.0, 0.0) * x * x)
        z = tf.reduce_sum(tf.where(x > 0, x, 0.0))

    result = runner.run(load_spec_text(SPEC, path="spec.yaml"), backend=backend, numeric=False)
    got = np.asarray(result.values["mask"])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, mask.numpy())
    for name, want in (("y", y), ("z", z)):
        assert np.asarray(result.values[name]).dtype == np.float32
        assert float(result.values[name]) == float(want.numpy())
        np.testing.assert_array_equal(result.gradients[name]["x"].overridden,
                                      tape.gradient(want, x).numpy())
