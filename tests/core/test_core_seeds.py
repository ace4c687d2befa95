"""The seed blog posts' TensorFlow examples (shared/seeds/*.txt), reproduced with their numbers."""
from __future__ import annotations

import numpy as np
import pytest
from core_helpers import assert_close

import gradcli as gc
from gradcli.errors import GradientError


# ----- 000: override maps, identity with a custom gradient, the stop_gradient trick -----
def test_quantize_grad_overrides_sign(gradient_name):
    name = gradient_name("QuantizeGrad")

    @gc.register_gradient(name)
    def sign_grad(op, grad):
        input = op.inputs[0]  # noqa: A001 - the seed's spelling
        cond = (input >= -1) & (input <= 1)
        zeros = gc.zeros_like(grad)
        return gc.where(cond, grad, zeros)

    def binary(input):  # noqa: A002
        x = input
        with gc.gradient_override_map({"Sign": name}):
            x = gc.sign(x)
        return x

    x = gc.variable([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    y = binary(x)
    assert_close(y.numpy(), [-1, -1, -1, 0, 1, 1, 1])
    (g,) = gc.gradients(y, x, grad_ys=[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])
    assert_close(g.numpy(), [0, 2, 3, 4, 5, 6, 0])
    # the built-in hardtanh is the same rule
    with gc.gradient_override_map({"Sign": "hardtanh"}):
        y2 = gc.sign(x)
    assert_close(gc.gradients(y2, x, grad_ys=[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])[0].numpy(),
                 g.numpy())
    # without the override, sign has a zero gradient
    assert_close(gc.gradients(gc.sign(x), x)[0].numpy(), np.zeros(7))


def test_custom_grad_on_identity_gives_minus_one(gradient_name):
    name = gradient_name("CustomGrad")
    x1, x2 = gc.variable(1), gc.variable(3)
    gc.variable(6)

    @gc.register_gradient(name)
    def CustomGrad(op, grad):  # noqa: N802 - the seed's spelling
        return -grad

    oo = x1 + x2
    with gc.gradient_override_map({"Identity": name}):
        output = gc.identity(oo)
    grad_1 = gc.gradients(output, oo)
    assert [g.numpy() for g in grad_1] == [-1.0]
    assert output.numpy() == 4.0


def test_stop_gradient_trick_reverses_the_gradient():
    x1, x2, x3 = gc.variable(1), gc.variable(3), gc.variable(6)
    f = x1 + x2 * x3
    t = -f
    y1 = t + gc.stop_gradient(f - t)
    y2 = f
    grad_1 = gc.gradients(y1, x1)
    grad_2 = gc.gradients(y2, x1)
    assert [g.numpy() for g in grad_1] == [-1.0]
    assert [g.numpy() for g in grad_2] == [1.0]
    assert y1.numpy() == 19.0  # forward is f
    assert [g.numpy() for g in gc.gradients(y1, [x2, x3])] == [-6.0, -3.0]


# ----- 001: tf.gradients with stop_gradients, compute_gradients, clipping -----
def test_stop_gradients_example():
    a = gc.constant(0.)
    b = 2 * a
    g = gc.gradients(a + b, [a, b], stop_gradients=[a, b])
    assert gc.evaluate(g) == [1.0, 1.0]
    g = gc.gradients(a + b, [a, b])
    assert gc.evaluate(g) == [3.0, 1.0]


def test_clipping_example_gradient_clip_by_norm_then_sgd():
    w, x = gc.variable(2.0), gc.variable(3.0)
    loss = w * x * x
    optimizer = gc.train.GradientDescentOptimizer(0.1)
    grads_and_vars = optimizer.compute_gradients(loss, [w, x])
    grads = gc.gradients(loss, [w, x])
    assert [(gc.evaluate(g), gc.evaluate(v)) for g, v in grads_and_vars] == [(9.0, 2.0), (12.0, 3.0)]
    for i, (gradient, var) in enumerate(grads_and_vars):
        if gradient is not None:
            grads_and_vars[i] = (gc.clip_by_norm(gradient, 5), var)
    assert [(gc.evaluate(g), gc.evaluate(v)) for g, v in grads_and_vars] == [(5.0, 2.0), (5.0, 3.0)]
    assert gc.evaluate(grads) == [9.0, 12.0]
    optimizer.apply_gradients(grads_and_vars)
    # the seed says 1.5 and 2.5; tf.train takes lr 0.1 as float32(0.1), so TF moves each by
    # 5 * 0.10000000149011612 (TensorFlow 2.21 gives 1.4999999925494194, 2.4999999925494194)
    assert [w.numpy(), x.numpy()] == [1.4999999925494194, 2.4999999925494194]
    w_, x_ = 1.4999999925494194, 2.4999999925494194
    assert gc.evaluate(grads) == [x_ * x_, 2 * w_ * x_]  # the same graph, new values


def test_clip_by_global_norm_example():
    w, x = gc.variable(2.0), gc.variable(3.0)
    loss = w * x * x
    params = [w, x]
    opt = gc.train.GradientDescentOptimizer(0.1)
    gradients = gc.gradients(loss, params)
    clipped_gradients, norm = gc.clip_by_global_norm(gradients, 5.0)
    assert_close(norm.numpy(), 15.0)
    assert_close(gc.evaluate(clipped_gradients), [3.0, 4.0])
    opt.apply_gradients(zip(clipped_gradients, params, strict=True))
    assert_close([w.numpy(), x.numpy()], [1.7, 2.6], rtol=1e-12)


def test_minimize_is_compute_then_apply():
    w, x = gc.variable(2.0), gc.variable(3.0)
    gc.train.GradientDescentOptimizer(learning_rate=1.0).minimize(w * x * x)
    assert (w.numpy(), x.numpy()) == (2.0 - 9.0, 3.0 - 12.0)


# ----- 002: sigmoid_or_bin with a custom gradient, grad_pass_through -----
X = [-0.416049719, -0.586867094, 0.0707814693, 0.122514963]
SIGMOID = [0.397462428, 0.357354015, 0.517688, 0.530590475]
SIGMOID_GRAD = [0.239486054, 0.229652107, 0.249687135, 0.249064222]


def sigmoid_grad(x):
    return gc.gradients(gc.sigmoid(x), x)[0]


@gc.custom_gradient
def sigmoid_or_bin(x, rand):
    out = gc.where(rand > 0.5, gc.sigmoid(x), gc.cast(x > 0, gc.dtype(x)))
    return out, lambda y: (y * sigmoid_grad(x), None)


def test_sigmoid_or_bin():
    x = gc.constant(X, dtype="float32")
    y = gc.sigmoid(x)
    assert_close(y.numpy(), SIGMOID, rtol=1e-6)
    assert_close(gc.gradients(y, x)[0].numpy(), SIGMOID_GRAD, rtol=1e-6)
    y = sigmoid_or_bin(x, 0.2)
    assert y.dtype == np.float32
    assert_close(y.numpy(), [0, 0, 1, 1], rtol=0, atol=0)
    (g,) = gc.gradients(y, x)
    assert g.dtype == np.float32
    assert_close(g.numpy(), SIGMOID_GRAD, rtol=1e-6)
    y = sigmoid_or_bin(x, 0.8)
    assert_close(y.numpy(), SIGMOID, rtol=1e-6)
    assert_close(gc.gradients(y, x)[0].numpy(), SIGMOID_GRAD, rtol=1e-6)
    rand = gc.constant(0.2)
    assert gc.gradients(sigmoid_or_bin(x, rand), [x, rand])[1] is None
    # the step's own derivative is zero: only the custom gradient makes it trainable
    assert_close(gc.true_gradients(sigmoid_or_bin(x, 0.2), x)[0].numpy(), np.zeros(4))


def test_grad_pass_through_from_the_question():
    feature = gc.variable([-1.0, 0.5, 2.0, -0.25])
    non_diff_active = gc.grad_pass_through(lambda x: gc.where(gc.greater(x, 0), x,
                                                              gc.zeros_like(x)))(feature)
    assert_close(non_diff_active.numpy(), [0.0, 0.5, 2.0, 0.0])
    grads = gc.gradients(non_diff_active, feature)[0]
    assert_close(grads.numpy(), [1.0, 1.0, 1.0, 1.0])
    out = gc.sum(non_diff_active * feature)  # tf.math.multiply(binary_masks, feature)
    assert_close(gc.gradients(out, feature)[0].numpy(), np.array([0.0, 0.5, 2.0, 0.0])
                 + feature.numpy())


# ----- 003: ZeroOut's two-output gradient, op.get_attr -----
def test_zero_out_gradient_is_first_dy_then_zeros():
    x = gc.variable([3.0, 1.0, 2.0])
    zeroed, index = gc.zero_out(x)
    assert_close(zeroed.numpy(), [3.0, 0.0, 0.0])
    assert index.numpy() == 0
    (g,) = gc.gradients(zeroed, x, grad_ys=[[5.0, 6.0, 7.0]])
    assert_close(g.numpy(), [5.0, 0.0, 0.0])
    m = gc.variable([[1.0, 2.0], [3.0, 4.0]])
    (g,) = gc.gradients(gc.zero_out(m)[0], m, grad_ys=[[[5.0, 6.0], [7.0, 8.0]]])
    assert_close(g.numpy(), [[5.0, 0.0], [0.0, 0.0]])


def test_zero_out_gradient_registered_as_in_the_post(gradient_name):
    name = gradient_name("ZeroOut")

    @gc.register_gradient(name)
    def _zero_out_grad(op, grad, _):
        to_zero = op.inputs[0]
        first_grad = gc.reshape(grad, [-1])[0]
        index = gc.constant(0, dtype="int64")
        to_zero_grad = gc.reshape(gc.one_hot(index, to_zero.size), to_zero.shape) * first_grad
        return [to_zero_grad]

    x = gc.variable([3.0, 1.0, 2.0])
    with gc.gradient_override_map({"ZeroOut": name}):
        zeroed, _ = gc.zero_out(x)
    assert_close(gc.gradients(zeroed, x, grad_ys=[[5.0, 6.0, 7.0]])[0].numpy(), [5.0, 0.0, 0.0])


def test_a_rule_missing_the_second_output_gradient_is_a_sentence(gradient_name):
    # the post's "wrong!!" version: TensorFlow fails with a bare TypeError here
    name = gradient_name("ZeroOutWrong")

    @gc.register_gradient(name)
    def _zero_out_grad(op, grad):
        return [grad]

    x = gc.variable([3.0, 1.0, 2.0])
    with gc.gradient_override_map({"ZeroOut": name}):
        zeroed, _ = gc.zero_out(x)
    with pytest.raises(GradientError, match=f"gradient '{name}' for op 'zero_out' cannot be "
                                            "called with the op and 2 upstream gradient\\(s\\), "
                                            "one per output: define it as "
                                            "def f\\(op, grad0, grad1\\)"):
        gc.gradients(zeroed, x)


def test_a_type_error_inside_a_rule_is_not_disguised(gradient_name):
    name = gradient_name("Broken")

    @gc.register_gradient(name)
    def broken(op, grad):
        return grad * len(op.uid)  # TypeError: an int has no len()

    x = gc.variable([1.0])
    with gc.gradient_override_map({"Sign": name}):
        y = gc.sign(x)
    with pytest.raises(TypeError, match="has no len"):
        gc.gradients(y, x)


def test_gradient_reversal_with_scale_one_half():
    x = gc.variable([1.0, -2.0, 3.0])
    features = x * x
    reversed_ = gc.reverse_gradient(features, 0.5)
    assert_close(reversed_.numpy(), [1.0, 4.0, 9.0])
    (g,) = gc.gradients(gc.sum(reversed_), x)
    assert_close(g.numpy(), -0.5 * 2 * x.numpy())
