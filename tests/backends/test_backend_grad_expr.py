"""grad(y, x) in expressions and functions with their own let, on every backend, against torch
(torch.autograd.grad with create_graph=True) and TensorFlow (nested GradientTape,
tf.custom_gradient) written here: second derivatives, a Hessian-vector product, gradient
penalties through override_map and custom gradients, and training on a penalty."""
from __future__ import annotations

import numpy as np
import tensorflow as tf
import torch
from grad_helpers import close, grad, run, t64

# ----- a second (and third) derivative of a scalar function -----
SCALAR = """
inputs:
  x: 0.7
let:
  y: x ** 3 * sin(x) + exp(-x)
  d1: grad(y, x)
outputs:
  d2: grad(d1, x)
"""


def test_second_derivative_of_a_scalar_function(backend):
    result = run(SCALAR, backend)
    x = t64(0.7)
    y = x ** 3 * torch.sin(x) + torch.exp(-x)
    d1 = grad(y, x)
    d2 = grad(d1, x)
    (d3,) = torch.autograd.grad(d2, x)
    close(result.values["d1"], d1.detach())
    close(result.values["d2"], d2.detach())
    row = result.gradients["d2"]["x"]
    close(row.overridden, d3)
    close(row.true, d3)  # no override anywhere: the true pass is the same derivative
    close(row.numeric, d3, rtol=1e-6, atol=1e-7)


# ----- a Hessian-vector product -----
HVP = """
inputs:
  x: [0.3, -1.2, 0.8]
  a: [[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]]
  v: {value: [1.0, -2.0, 0.5], trainable: false}
let:
  y: sum(tanh(a @ x) ** 2) + sum(x ** 4) / 4
  g: grad(y, x)
outputs:
  hvp: grad(sum(g * v), x)
"""


def test_hessian_vector_product(backend):
    result = run(HVP, backend)
    x, a = t64([0.3, -1.2, 0.8]), t64([[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]])
    v = t64([1.0, -2.0, 0.5], grad=False)
    y = (torch.tanh(a @ x) ** 2).sum() + (x ** 4).sum() / 4
    g = grad(y, x)
    hvp = grad((g * v).sum(), x)
    hessian = torch.autograd.functional.hessian(
        lambda x_: (torch.tanh(a.detach() @ x_) ** 2).sum() + (x_ ** 4).sum() / 4, x.detach())
    close(hvp.detach(), hessian @ v)  # the oracle itself, checked once more
    close(result.values["g"], g.detach())
    close(result.values["hvp"], hvp.detach())
    dx, da = torch.autograd.grad(hvp.sum(), [x, a])
    close(result.gradients["hvp"]["x"].overridden, dx)
    close(result.gradients["hvp"]["a"].overridden, da)
    close(result.gradients["hvp"]["a"].numeric, da, rtol=1e-6, atol=1e-7)


# ----- a gradient penalty -----
PENALTY = """
inputs:
  x: {value: [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]], trainable: false}
  w: [[0.4, -0.7, 1.1], [0.9, 0.3, -0.5]]
let:
  d: sum(softplus(x @ w))
outputs:
  penalty: sum(grad(d, x) ** 2)
"""


def test_gradient_penalty(backend):
    result = run(PENALTY, backend)
    x = t64([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]])
    w = t64([[0.4, -0.7, 1.1], [0.9, 0.3, -0.5]])
    d = torch.nn.functional.softplus(x @ w).sum()
    penalty = (grad(d, x) ** 2).sum()
    (dw,) = torch.autograd.grad(penalty, w)
    close(result.values["penalty"], penalty.detach())
    row = result.gradients["penalty"]["w"]
    close(row.overridden, dw)
    close(row.true, dw)
    close(row.numeric, dw, rtol=1e-6, atol=1e-7)


# ----- grad() through an override_map (straight-through sign) -----
STE = """
inputs:
  x: [-1.5, -0.3, 0.4, 2.0]
  w: [0.5, -1.0, 2.0, 1.5]
override_map:
  sign: hardtanh
let:
  d: sum(sign(x) * w * x)
  g: grad(d, x)
outputs:
  penalty: sum(g ** 2)
"""


def _tf_ste_penalty(x_value, w_value):
    """Nested tapes, sign with TensorFlow's own custom gradient (hard-tanh straight-through)."""
    @tf.custom_gradient
    def ste_sign(x):
        def backward(dy):
            return tf.where(tf.abs(x) <= 1, dy, tf.zeros_like(dy))
        return tf.sign(x), backward

    x, w = tf.constant(x_value, tf.float64), tf.constant(w_value, tf.float64)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, w])
        with tf.GradientTape() as inner:
            inner.watch(x)
            d = tf.reduce_sum(ste_sign(x) * w * x)
        g = inner.gradient(d, x)
        penalty = tf.reduce_sum(g ** 2)
    return g.numpy(), penalty.numpy(), [t.numpy() for t in outer.gradient(penalty, [x, w])]


def test_grad_through_an_override(backend):
    xs, ws = [-1.5, -0.3, 0.4, 2.0], [0.5, -1.0, 2.0, 1.5]
    result = run(STE, backend)
    g, penalty, (dx, dw) = _tf_ste_penalty(xs, ws)
    close(result.values["g"], g)
    close(result.values["penalty"], penalty)
    # overridden: the override holds on both levels, as in TensorFlow
    close(result.gradients["penalty"]["x"].overridden, dx)
    close(result.gradients["penalty"]["w"].overridden, dw)
    # true: grad()'s value as written (the straight-through gradient), differentiated exactly
    x, w = t64(xs), t64(ws)
    written = w * x * (x.abs() <= 1) + torch.sign(x) * w
    true_dx, true_dw = torch.autograd.grad((written ** 2).sum(), [x, w])
    close(result.gradients["penalty"]["x"].true, true_dx)
    close(result.gradients["penalty"]["w"].true, true_dw)
    close(result.gradients["penalty"]["x"].numeric, true_dx, rtol=1e-6, atol=1e-7)
    assert not np.allclose(true_dx, dx)  # the two passes do differ here


# ----- grad() through a function with its own let -----
FUNCTION = """
inputs:
  x: [-1.2, 0.1, 0.9, 2.5]
functions:
  swishish:
    args: [x]
    let: {s: sigmoid(x)}
    forward: s * x
    gradient: [dy * s]
let:
  g: grad(sum(swishish(x) * x), x)
outputs:
  penalty: sum(g ** 2)
"""


def _tf_function_penalty(x_value):
    @tf.custom_gradient
    def swishish(x):
        s = tf.sigmoid(x)

        def backward(dy):
            return dy * s  # the closure sees the forward's intermediate
        return s * x, backward

    x = tf.constant(x_value, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(swishish(x) * x)
        g = inner.gradient(y, x)
        penalty = tf.reduce_sum(g ** 2)
    return g.numpy(), penalty.numpy(), outer.gradient(penalty, x).numpy()


def test_grad_through_a_function_with_let(backend):
    xs = [-1.2, 0.1, 0.9, 2.5]
    result = run(FUNCTION, backend)
    g, penalty, dx = _tf_function_penalty(xs)
    close(result.values["g"], g)
    close(result.values["penalty"], penalty)
    close(result.gradients["penalty"]["x"].overridden, dx)
    # true: the custom gradient's value as written (dy * s), differentiated exactly; the
    # outer factor x of swishish(x) * x goes through swishish's real derivative
    x = t64(xs)
    s = torch.sigmoid(x)
    written = s * x + s * x  # d/dx of sum(f(x) * x) = f'(x) x + f(x), with f' := s
    (true_dx,) = torch.autograd.grad((written ** 2).sum(), x)
    close(result.gradients["penalty"]["x"].true, true_dx)
    close(result.gradients["penalty"]["x"].numeric, true_dx, rtol=1e-6, atol=1e-7)


# ----- training on a gradient-penalty loss -----
TRAIN_X = [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8], [1.0, 1.0]]
TRAIN_T = [1.0, -1.0, 0.5, 0.0]
W0 = [0.4, -0.7]
LR, STEPS, LAMBDA = 0.125, 5, 0.5  # 0.125 and 0.5 are exact in float32 (tf.train's lr)
TRAIN = f"""
inputs:
  x: {{value: {TRAIN_X}, trainable: false}}
  t: {{value: {TRAIN_T}, trainable: false}}
  w: {W0}
let:
  z: tanh(x @ w)
  fit: mean((z - t) ** 2)
  slope: grad(sum(z), x)
outputs:
  loss: fit + {LAMBDA} * mean((sqrt(sum(slope ** 2, axis=1)) - 1) ** 2)
train:
  loss: loss
  optimizer: {{name: sgd, lr: {LR}}}
  steps: {STEPS}
"""


def test_training_on_a_gradient_penalty(backend):
    result = run(TRAIN, backend, numeric=False)
    x, t = t64(TRAIN_X), t64(TRAIN_T, grad=False)
    w = t64(W0)
    losses = []
    for _ in range(STEPS):
        z = torch.tanh(x @ w)
        slope = grad(z, x)
        penalty = ((slope.pow(2).sum(dim=1).sqrt() - 1) ** 2).mean()
        loss = ((z - t) ** 2).mean() + LAMBDA * penalty
        losses.append(loss.item())
        (dw,) = torch.autograd.grad(loss, w)
        with torch.no_grad():
            w -= LR * dw
    close(result.train.loss, losses)
    close(result.train.final["w"], w.detach())


# ----- what an unconnected path gives -----
UNCONNECTED = """
inputs:
  x: [-0.5, 0.25, 2.0]
  v: [1.0, 2.0, 3.0]
let:
  steps: grad(sum(cast(x > 0, dtype(x)) * v), x)
  ones: grad(sum(x + v), x)
outputs:
  s: sum(steps)
  o: sum(ones * v)
"""


def test_unconnected_paths(backend):
    result = run(UNCONNECTED, backend)
    x = tf.constant([-0.5, 0.25, 2.0], tf.float64)
    v = tf.constant([1.0, 2.0, 3.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x > 0, tf.float64) * v)
    # TensorFlow gives None without a path; grad() takes UnconnectedGradients.ZERO
    assert tape.gradient(y, x) is None
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x > 0, tf.float64) * v)
    zeros = tape.gradient(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    close(result.values["steps"], zeros.numpy())
    close(result.values["ones"], [1.0, 1.0, 1.0])
    # a grad() result counts as connected to x and to what y reads: zeros, never null
    for out, name, expected in (("s", "x", [0, 0, 0]), ("s", "v", [0, 0, 0]),
                                ("o", "x", [0, 0, 0]), ("o", "v", [1, 1, 1])):
        row = result.gradients[out][name]
        close(row.overridden, expected)
        close(row.true, expected)


# ----- scoped override_map entries and grad(): they concern the spec's own ops -----
SCOPED = """
inputs:
  x: [-1.5, -0.3, 0.4, 2.0]
  w: [0.5, -1.0, 2.0, 1.5]
override_map:
  - {op: sign, gradient: identity, scope: [g]}
  - {op: mul, gradient: reverse, scope: [g2]}
let:
  d: sum(sign(x) * w * x)
  g: grad(d, x)
  e: sum(tanh(x) * w)
  g2: grad(e, x) * w
outputs:
  penalty: sum(g ** 2) + sum(g2 ** 2)
"""


def test_scoped_overrides_and_grad(backend):
    result = run(SCOPED, backend)

    class ReversedMul(torch.autograd.Function):  # 'reverse' on mul: -dy to a, none to b
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, dy):
            return -dy, None

    x, w = t64([-1.5, -0.3, 0.4, 2.0]), t64([0.5, -1.0, 2.0, 1.5])
    # sign is built in d, outside g's scope: its own (zero) derivative inside grad(d, x);
    # the muls of grad()'s backward pass are no op of g2's: only `* w` is reversed
    g = grad((torch.sign(x) * w * x).sum(), x)
    g2 = ReversedMul.apply(grad((torch.tanh(x) * w).sum(), x), w)
    penalty = (g ** 2).sum() + (g2 ** 2).sum()
    dx, dw = torch.autograd.grad(penalty, [x, w])
    close(result.values["g"], g.detach())
    close(result.values["g2"], g2.detach())
    close(result.gradients["penalty"]["x"].overridden, dx)
    close(result.gradients["penalty"]["w"].overridden, dw)
