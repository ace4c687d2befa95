"""What the op table says of max_with_argmax holds on every backend, TensorFlow (called here)
the oracle: its max's gradient goes all to the first maximal index, as tf.math.top_k(x, 1)'s,
where max(x, axis) splits ties as tf.reduce_max; the index is argmax's."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from available import BACKENDS, backend_params

from gradcli import runner
from gradcli.ops import OPS
from gradcli.spec import load_spec_text

X = [[1.0, 5.0, 5.0], [7.0, 2.0, 7.0], [0.5, -1.0, 3.0]]
W = [2.0, 3.0, -1.0]
SPEC = f"""\
inputs: {{x: {X}}}
let:
  "v, i": max_with_argmax(x, axis=1)
outputs:
  y: sum(v * {W})
  z: sum(max(x, axis=1) * {W})
  index: i
"""


def test_the_table_states_the_tie_rule_and_the_index_has_no_gradient():
    doc = OPS["max_with_argmax"].doc
    assert "the first of ties" in doc and "tf.math.top_k(x, 1)" in doc
    assert "(not differentiable)" not in doc and "the index has none" in doc


@pytest.mark.parametrize("backend", backend_params(BACKENDS))
def test_its_gradient_is_top_k_s_and_max_s_is_reduce_max_s(backend):
    x, w = tf.constant(X, tf.float64), tf.constant(W, tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        values, indices = tf.math.top_k(x, k=1)
        y = tf.reduce_sum(values[:, 0] * w)
        z = tf.reduce_sum(tf.reduce_max(x, axis=1) * w)
    result = runner.run(load_spec_text(SPEC, path="spec.yaml"), backend=backend, numeric=False)
    np.testing.assert_array_equal(result.values["index"], indices.numpy()[:, 0])
    np.testing.assert_array_equal(result.values["index"], tf.math.argmax(x, axis=1).numpy())
    assert float(result.values["y"]) == float(y.numpy())
    np.testing.assert_array_equal(result.gradients["y"]["x"].overridden, tape.gradient(y, x).numpy())
    np.testing.assert_array_equal(result.gradients["z"]["x"].overridden, tape.gradient(z, x).numpy())
