"""max, min, logsumexp, softmax and log_softmax over an empty axis give TensorFlow 2.21's
numbers on every backend (audit9's finding 7: numpy, torch and jax failed with "no identity"):
reduce_max -inf, reduce_min +inf (an integer dtype's lowest / highest value), reduce_logsumexp
-inf, softmax an empty tensor; and the gradients TF's tape gives, of x's (empty) shape.
Oracle: TensorFlow itself, called here."""
from __future__ import annotations

import os

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

SPEC = """
inputs:
  z: {zeros: [0, 3]}
  w: {zeros: [3, 0]}
outputs:
  a: max(z, axis=0)
  b: min(w, axis=1)
  c: logsumexp(z, axis=0)
  d: max(z)
  e: softmax(z, axis=0)
  f: log_softmax(w, axis=1)
  g: min(z, axis=[0, 1], keepdims=True)
  h: logsumexp(w, axis=0)
"""
TF = {  # output: (input, TF's op on it)
    "a": ("z", lambda z: tf.reduce_max(z, axis=0)),
    "b": ("w", lambda w: tf.reduce_min(w, axis=1)),
    "c": ("z", lambda z: tf.reduce_logsumexp(z, axis=0)),
    "d": ("z", tf.reduce_max),
    "e": ("z", lambda z: tf.nn.softmax(z, axis=0)),
    "f": ("w", lambda w: tf.nn.log_softmax(w, axis=1)),
    "g": ("z", lambda z: tf.reduce_min(z, axis=[0, 1], keepdims=True)),
    "h": ("w", lambda w: tf.reduce_logsumexp(w, axis=0)),
}
SHAPES = {"z": (0, 3), "w": (3, 0)}


def tf_value_and_gradient(name):
    source, op = TF[name]
    x = tf.zeros(SHAPES[source], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
    return y.numpy(), tape.gradient(y, x).numpy()


def test_empty_axis_reductions_are_tensorflows(backend):
    result = runner.run(load(SPEC), backend=backend)
    for name, (source, _) in TF.items():
        value, gradient = tf_value_and_gradient(name)
        got = np.asarray(result.values[name])
        assert got.shape == value.shape and np.array_equal(got, value), name
        row = result.gradients[name][source]
        for kind in ("overridden", "true", "numeric"):
            assert np.shape(getattr(row, kind)) == gradient.shape, (name, kind)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_empty_integer_max_and_min_are_tensorflows_lowest_and_highest(backend, dtype):
    name = dtype.name
    spec = f"inputs:\n  k: {{value: [], dtype: {name}}}\noutputs:\n  m: max(k)\n  n: min(k)\n"
    result = runner.run(load(spec), backend=backend, numeric=False)
    empty = tf.zeros([0], dtype)
    for out, op in (("m", tf.reduce_max), ("n", tf.reduce_min)):
        want = op(empty).numpy()
        assert result.values[out] == want and np.asarray(result.values[out]).dtype == want.dtype
