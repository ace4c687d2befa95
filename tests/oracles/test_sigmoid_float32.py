"""float32 sigmoid on the numpy core against the float64 value rounded once (numpy, here),
and its gradient against TensorFlow's GradientTape and torch's autograd, called here.

The old kernel rounded twice in float32 (logaddexp, then exp): off the correctly rounded
value at ~45% of inputs, and 1 ulp of y is 1.3e-3 of the gradient y * (1 - y) at x = 10,
where TF, torch and jax agree with each other (tryout7, finding 2)."""
from __future__ import annotations

import warnings

import numpy as np
from oracle_helpers import tensorflow

import gradcli as gc

tf = tensorflow()


def _core(x):
    v = gc.variable(x, dtype="float32")
    y = gc.sigmoid(v)
    return gc.evaluate(y), gc.evaluate(gc.gradients(gc.sum(y), [v])[0])


def test_float32_sigmoid_is_the_float64_value_rounded_once():
    rng = np.random.default_rng(7)
    x = np.concatenate([np.linspace(-20, 20, 4001), rng.uniform(-90, 90, 4000),
                        rng.standard_normal(1000) * 1e-3]).astype(np.float32)
    with np.errstate(over="ignore"):
        exact = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    y, _ = _core(x)
    assert y.dtype == np.float32
    wrong = np.flatnonzero(y != exact.astype(np.float32))
    assert wrong.size == 0, f"{wrong.size} of {x.size} not correctly rounded, first x={x[wrong[:5]]}"


def test_float32_sigmoid_gradient_is_tensorflow_and_torch_bits():
    torch = __import__("pytest").importorskip("torch")
    x = np.array([3.0, 5.0, 8.0, 10.0], np.float32)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y_tf = tf.sigmoid(xt)
    g_tf = tape.gradient(y_tf, xt).numpy()
    x_torch = torch.from_numpy(x.copy()).requires_grad_()
    torch.sigmoid(x_torch).sum().backward()
    np.testing.assert_array_equal(x_torch.grad.numpy(), g_tf)  # the oracles agree here
    y, g = _core(x)
    np.testing.assert_array_equal(y, y_tf.numpy())
    np.testing.assert_array_equal(g, g_tf)  # 4.54167e-05 at x = 10, not 4.53571e-05


def test_float32_sigmoid_tails_are_exact_and_quiet_as_tensorflow():
    x = np.array([-np.inf, -1e30, -1000.0, -104.0, 0.0, 40.0, 100.0, 1e30, np.inf, np.nan],
                 np.float32)
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        y, g = _core(x)
        scalar = gc.evaluate(gc.sigmoid(gc.constant(np.float32(-1e30), dtype="float32")))
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y_tf = tf.sigmoid(xt)
    np.testing.assert_array_equal(y, y_tf.numpy())
    np.testing.assert_array_equal(g, tape.gradient(y_tf, xt).numpy())
    assert y.dtype == np.float32 and np.asarray(scalar).dtype == np.float32 and scalar == 0
