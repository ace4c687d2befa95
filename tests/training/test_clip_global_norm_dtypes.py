"""clip: {global_norm: N} over gradients of two float dtypes (a float32 input in a float64
spec): TensorFlow's tf.clip_by_global_norm refuses them (it stacks the per-tensor norms), so
every backend refuses the spec at train.clip (exit 2) instead of training to numbers of its
own (torch and jax promoted the float32 gradient, and jax then trained the float32 variable
in float64) or failing with an internal error (tensorflow)."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

SPEC = """
inputs:
  s: {value: [0.3, -1.1, 0.7], dtype: float32}
  w: [1.5, -0.5, 0.25]
outputs:
  loss: sum(square(sin(cast(s, dtype(w))) * w - 1.0))
train:
  optimizer: {name: sgd, lr: 0.1}
  steps: 3
  clip: {global_norm: 1.5}
"""


def test_tensorflow_refuses_a_global_norm_over_two_float_dtypes():
    """The oracle: TF 2.21 itself, on the same two gradients."""
    s = tf.Variable(np.array([0.3, -1.1, 0.7], np.float32))
    w = tf.Variable(np.array([1.5, -0.5, 0.25]))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.sin(tf.cast(s, tf.float64)) * w - 1.0))
    grads = tape.gradient(loss, [s, w])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.clip_by_global_norm(grads, 1.5)


def test_every_backend_refuses_it_at_train_clip(backend):
    exp = load_spec_text(SPEC, path="spec.yaml")
    with pytest.raises(SpecError) as info:
        runner.run(exp, backend=backend, numeric=False)
    text = str(info.value)
    assert text.startswith("spec.yaml:10:3: train.clip: "), text
    assert "float32" in text and "float64" in text and "cast(" in text


def test_one_dtype_or_a_per_tensor_clip_still_trains(backend):
    """Per-tensor clip_by_norm has no such limit in TF, and neither has gradcli."""
    exp = load_spec_text(SPEC.replace("{global_norm: 1.5}", "{norm: 1.5}"), path="spec.yaml")
    got = runner.run(exp, backend=backend, numeric=False).train
    s = tf.Variable(np.array([0.3, -1.1, 0.7], np.float32))
    w = tf.Variable(np.array([1.5, -0.5, 0.25]))
    opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.sin(tf.cast(s, tf.float64)) * w - 1.0))
        grads = [tf.clip_by_norm(g, 1.5) for g in tape.gradient(loss, [s, w])]
        opt.apply_gradients(zip(grads, [s, w]))
    assert got.final["s"].dtype == np.float32
    np.testing.assert_allclose(got.final["s"], s.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got.final["w"], w.numpy(), rtol=1e-12)
