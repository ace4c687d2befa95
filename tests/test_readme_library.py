"""README's "The library" lists where gc.train and bare numbers differ from TensorFlow; each
difference stated there holds (TensorFlow, called here, is the oracle for its side)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import tensorflow as tf

import gradcli as gc

ROOT = Path(__file__).resolve().parents[1]


def _library_section() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## The library"):]
    return re.sub(r"\s+", " ", section[:section.index("\n## ", 3)])


def test_minimize_and_apply_gradients_step_now_and_return_none_where_tf1_returns_an_op():
    section = _library_section()
    assert ("`minimize(loss)` and `apply_gradients(pairs)` apply their step when called and "
            "return `None`") in section
    a = gc.variable([1.0, -2.0])
    z = gc.sum(a * a)
    opt = gc.train.GradientDescentOptimizer(0.25)
    assert opt.minimize(z) is None
    after_minimize = a.numpy().copy()
    assert opt.apply_gradients(opt.compute_gradients(z)) is None
    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.Variable([1.0, -2.0], dtype=tf.float64)
        loss = tf.reduce_sum(v * v)
        tf_opt = tf.compat.v1.train.GradientDescentOptimizer(0.25)
        step = tf_opt.minimize(loss)
        apply = tf_opt.apply_gradients(tf_opt.compute_gradients(loss))
        assert isinstance(step, tf.Operation) and isinstance(apply, tf.Operation)
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(v.initializer)
            sess.run(step)
            first = sess.run(v)
            sess.run(apply)
            second = sess.run(v)
    np.testing.assert_array_equal(after_minimize, first)
    np.testing.assert_array_equal(a.numpy(), second)


def test_a_bare_number_beside_only_a_boolean_is_float64_in_the_library_float32_in_tf():
    section = _library_section()
    assert "`gc.where(x > 0, 1.0, 0.0)` is float64" in section
    x32 = np.array([1.5, -0.5], dtype=np.float32)
    x = gc.constant(x32)
    assert gc.where(x > 0, 1.0, 0.0).dtype == np.float64
    assert tf.where(tf.constant(x32) > 0, 1.0, 0.0).dtype == tf.float32  # TF's default float
    beside = gc.where(x > 0, x, 0.0)
    want = tf.where(tf.constant(x32) > 0, tf.constant(x32), 0.0)
    assert beside.dtype == np.float32 and want.dtype == tf.float32
    np.testing.assert_array_equal(beside.numpy(), want.numpy())
    assert gc.cast(x > 0, x.dtype).dtype == np.float32
