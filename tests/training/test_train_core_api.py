"""gc.train.RMSPropOptimizer and scheduled learning rates in the Python API against
tf.compat.v1.train; the numpy core builds one graph per data shape, never one per step."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from oracle import dataset

import gradcli as gc
from gradcli import training
from gradcli.backends import build
from gradcli.spec import load_spec_text

W0 = np.array([0.4, -1.2, 2.0])
TARGET = np.array([1.0, 0.5, -0.5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("schedule", [None, ("cosine", {"steps": 4})])
def test_rmsprop_optimizer_matches_tf_bit_for_bit(dtype, schedule):
    lr, decay, momentum, eps = 0.03, 0.8, 0.3, 1e-6
    kind, params = schedule or (None, {})
    rate = training.Schedule(lr, kind, **params)
    w = gc.variable(W0.astype(dtype), name="w")
    loss = gc.sum(gc.square(gc.sin(w) * 3.0 - TARGET.astype(dtype)))
    opt = gc.train.RMSPropOptimizer(rate, decay=decay, momentum=momentum, epsilon=eps)
    ref = tf.Variable(W0.astype(dtype))
    lr_var = tf.Variable(np.float32(lr))
    tf_opt = tf.compat.v1.train.RMSPropOptimizer(lr_var, decay=decay, momentum=momentum,
                                                 epsilon=eps)
    for t in range(6):
        opt.minimize(loss)
        with tf.GradientTape() as tape:
            tf_loss = tf.reduce_sum(tf.square(tf.sin(ref) * 3.0 - TARGET.astype(dtype)))
        lr_var.assign(np.float32(rate(t)))
        tf_opt.apply_gradients([(tape.gradient(tf_loss, ref), ref)])
        np.testing.assert_array_equal(w.numpy(), ref.numpy())


def test_schedules_follow_spec_v2_formulas():
    cos = training.Schedule(0.2, "cosine", steps=10)
    assert cos(0) == 0.2 and cos(5) == pytest.approx(0.1) and cos(10) == 0.0 and cos(15) == 0.0
    step = training.Schedule(0.2, "step", every=3, gamma=0.5)
    assert [step(t) for t in (0, 2, 3, 5, 6)] == [0.2, 0.2, 0.1, 0.1, 0.05]
    exp = training.Schedule(0.2, "exponential", gamma=0.9)
    assert exp(3) == pytest.approx(0.2 * 0.9 ** 3)


def test_callable_learning_rate_on_sgd_uses_each_steps_rate():
    w = gc.variable(1.0, name="w")
    loss = w * 2.0  # gradient 2 everywhere
    opt = gc.train.GradientDescentOptimizer(lambda t: [0.5, 0.25, 0.125][t])
    for _ in range(3):
        opt.minimize(loss)
    assert w.numpy() == pytest.approx(1.0 - 2 * (0.5 + 0.25 + 0.125))


def test_numpy_builds_one_graph_per_data_shape_and_feeds_batches(tmp_path):
    """17 training rows in batches of 5 (5, 5, 5, 2), a 6-row test part: the first batch's graph,
    the short batch's, the whole training part's and the test part's; 4 epochs replay them."""
    x, y = dataset()
    np.savez(tmp_path / "d.npz", X=x, y=y)
    text = """
data: {load: d.npz, features: X, labels: y, test: 0.25}
inputs:
  w: [0.1, 0.2, 0.3]
let:
  z: matmul(X, w)
outputs:
  loss: mean(square(z - cast(y, dtype(z))))
train:
  optimizer: {name: sgd, lr: 0.01}
  batch_size: 5
  epochs: 4
  metrics: {m: mean(z)}
"""
    exp = load_spec_text(text, path=str(tmp_path / "spec.yaml"))
    program = build(exp, "numpy")
    trainee = program.trainee()
    built = []
    original = trainee._build
    trainee._build = lambda batch: built.append(len(next(iter(batch.values())))) or original(batch)
    record = training.train(trainee, exp)
    assert record.steps == 16 and sorted(built) == [2, 6, 17]
    assert len(trainee.graphs) == 4
