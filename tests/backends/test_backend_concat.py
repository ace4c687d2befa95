"""concat joins along an existing axis (np.concatenate / tf.concat), stack along a new one,
on every backend, forward and backward; TensorFlow written here is the oracle."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from backend_helpers import load

from gradcli import runner

X, Z = [1.5, -2.0], [0.25]
M = [[1.0, 2.0], [3.0, -4.0]]
W4, W3 = [1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0]
SPEC = f"""
inputs:
  x: {X}
  z: {Z}
  m: {M}
let:
  same: concat([x, x])
  mixed: concat([x, z])
  wide: concat([m, square(m)], axis=1)
  tall: concat(values=[m, m * x], axis=-2)
  pairs: stack([x, x * x], axis=1)
outputs:
  a: sum(sin(same) * {W4})
  b: sum(exp(mixed) * {W3})
  c: sum(wide * concat([m, m], axis=1))
  d: sum(tall * tall)
  e: sum(pairs * {M})
"""


def oracle():
    """Values and d(output)/d(input) with tf.concat / tf.stack under a GradientTape."""
    x, z, m = (tf.Variable(np.array(v, dtype=np.float64)) for v in (X, Z, M))
    w4, w3, k = (tf.constant(np.array(v, dtype=np.float64)) for v in (W4, W3, M))
    with tf.GradientTape(persistent=True) as tape:
        lets = {"same": tf.concat([x, x], axis=0),
                "mixed": tf.concat([x, z], axis=0),
                "wide": tf.concat([m, tf.square(m)], axis=1),
                "tall": tf.concat([m, m * x], axis=-2),
                "pairs": tf.stack([x, x * x], axis=1)}
        outs = {"a": tf.reduce_sum(tf.sin(lets["same"]) * w4),
                "b": tf.reduce_sum(tf.exp(lets["mixed"]) * w3),
                "c": tf.reduce_sum(lets["wide"] * tf.concat([m, m], axis=1)),
                "d": tf.reduce_sum(lets["tall"] * lets["tall"]),
                "e": tf.reduce_sum(lets["pairs"] * k)}
    inputs = {"x": x, "z": z, "m": m}
    grads = {o: {n: tape.gradient(y, v) for n, v in inputs.items()} for o, y in outs.items()}
    values = {n: t.numpy() for n, t in {**lets, **outs}.items()}
    return values, {o: {n: None if g is None else g.numpy() for n, g in row.items()}
                    for o, row in grads.items()}


@pytest.fixture(scope="module")
def expected():
    return oracle()


def test_concat_joins_along_an_existing_axis(backend, expected):
    values, grads = expected
    result = runner.run(load(SPEC, "concat"), backend=backend)
    assert np.shape(result.values["same"]) == (4,)
    assert np.shape(result.values["mixed"]) == (3,)
    assert np.shape(result.values["tall"]) == (4, 2)
    for name, value in values.items():
        np.testing.assert_allclose(result.values[name], value, rtol=1e-12, err_msg=name)
    for out, row in grads.items():
        for name, g in row.items():
            got = result.gradients[out][name]
            if g is None:
                assert got.overridden is None and got.true is None, (out, name)
                continue
            np.testing.assert_allclose(got.overridden, g, rtol=1e-12, err_msg=f"d{out}/d{name}")
            np.testing.assert_allclose(got.true, g, rtol=1e-12, err_msg=f"d{out}/d{name}")
