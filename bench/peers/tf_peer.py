"""TensorFlow: eager GradientTape, or the same function under tf.function (traced in the build).

Loops are plain Python loops, unrolled by tf.function as a user's code would be.
"""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

from bench.peers import Case, NotApplicable  # noqa: E402

VERSION = tf.__version__


def _case(fn, args, variant) -> Case:
    if variant == "function":
        fn = tf.function(fn)
        fn.get_concrete_function(*args)  # trace now; the first run still optimizes (grappler)
    return Case(lambda: fn(*args))


def _value_and_grads(f):
    def run(*xs):
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        return y, tape.gradient(y, xs)
    return run


@tf.custom_gradient
def sign_ste(x):
    return tf.sign(x), lambda g: tf.where(tf.abs(x) <= 1, g, tf.zeros_like(g))


def w1(d, variant) -> Case:
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = tf.tanh(y * 1.0001 + 0.1)
        return y

    return _case(_value_and_grads(f), (tf.constant(d["x"]),), variant)


def w2(d, variant) -> Case:
    f = lambda x, w: tf.reduce_sum(sign_ste(x) * w + 0.5 * x * x)  # noqa: E731
    return _case(_value_and_grads(f), (tf.constant(d["x"]), tf.constant(d["w"])), variant)


def mlp_loss(X, W1, b1, W2, labels):
    logits = tf.tanh(X @ W1 + b1) @ W2
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))


def w3(d, variant) -> Case:
    labels = tf.constant(d["labels"])
    f = lambda X, W1, b1, W2: mlp_loss(X, W1, b1, W2, labels)  # noqa: E731
    return _case(_value_and_grads(f), tuple(tf.constant(d[k]) for k in ("X", "W1", "b1", "W2")), variant)


def w4(d, variant) -> Case:
    if variant == "function":
        raise NotApplicable("tf.function folds an affine chain's gradient into a constant "
                            "(and tracing 200,000 unrolled ops is not a real use)")
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = y * 0.999 + 0.001
        return tf.reduce_sum(y)

    return _case(_value_and_grads(f), (tf.constant(d["x"]),), variant)


def w5(d, variant) -> Case:
    """Variables, GradientTape, tf.clip_by_global_norm, assign_sub: one step per call."""
    lr, clip = d["lr"], d["clip"]
    X, labels = tf.constant(d["X"]), tf.constant(d["labels"])
    params = [tf.Variable(d[k]) for k in ("W1", "b1", "W2")]

    def step():
        with tf.GradientTape() as tape:
            loss = mlp_loss(X, *params, labels)
        grads, _ = tf.clip_by_global_norm(tape.gradient(loss, params), clip)
        for p, g in zip(params, grads, strict=True):
            p.assign_sub(lr * g)

    if variant == "function":
        step = tf.function(step)
        step.get_concrete_function()

    def reset():
        for p, k in zip(params, ("W1", "b1", "W2"), strict=True):
            p.assign(d[k])

    def run():
        for _ in range(d["steps"]):
            step()
        return [p.numpy() for p in params]

    return Case(run, reset=reset)
