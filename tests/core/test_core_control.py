"""Gradient control: register_gradient, override maps, custom_gradient and the wrappers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from core_helpers import assert_close, fd_gradients

import gradcli as gc
from gradcli.errors import GradientError, RegistryError


# ----- register_gradient -----
def test_a_rule_sees_the_op_and_one_gradient_per_output(gradient_name):
    name, seen = gradient_name("Inspect"), {}

    @gc.register_gradient(name)
    def inspect(op, grad):
        seen.update(type=op.type, n_in=len(op.inputs), axis=op.get_attr("axis"),
                    keepdims=op.get_attr("keepdims"), out_shape=op.outputs[0].shape,
                    grad_shape=grad.shape)
        return gc.reshape(grad, (2, 1)) * op.inputs[0] * 10.0

    x = gc.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with gc.gradient_override_map({"Sum": name}):
        y = gc.sum(x, axis=1)
    (g,) = gc.gradients(y, x, grad_ys=[[1.0, -1.0]])
    assert seen == dict(type="sum", n_in=1, axis=(1,), keepdims=False, out_shape=(2,),
                        grad_shape=(2,))
    assert_close(g.numpy(), [[10, 20, 30], [-40, -50, -60]])


def test_a_plain_number_is_broadcast_and_stays_connected(gradient_name):
    name = gradient_name("Number")
    gc.register_gradient(name)(lambda op, grad: 3)
    x = gc.constant([1.0, 2.0, 3.0])
    with gc.gradient_override_map({"Sign": name}):
        y = gc.sign(x)
    (g,) = gc.gradients(gc.sum(y), x)
    assert g.dtype == np.float64
    assert_close(g.numpy(), [3.0, 3.0, 3.0])
    zero = gradient_name("Zero")
    gc.register_gradient(zero)(lambda op, grad: 0)  # TensorFlow fails on `return 0`; we broadcast
    with gc.gradient_override_map({"Sign": zero}):
        y = gc.sign(x)
    assert_close(gc.gradients(gc.sum(y), x)[0].numpy(), [0.0, 0.0, 0.0])


def test_a_multi_input_rule_returns_none_where_an_input_gets_none(gradient_name):
    name = gradient_name("FirstOnly")

    @gc.register_gradient(name)
    def first_only(op, grad):
        return [grad * op.inputs[1], None]

    a, b = gc.constant([1.0, 2.0]), gc.constant([3.0, 4.0])
    with gc.gradient_override_map({"Mul": name}):
        y = a * b
    ga, gb = gc.gradients(gc.sum(y), [a, b])
    assert_close(ga.numpy(), [3.0, 4.0])
    assert gb is None


def test_rules_for_multi_output_ops_take_one_gradient_per_output(gradient_name):
    # the seeds' RoiPool / ZeroOut pattern: def grad(op, grad, _), TensorFlow's op names
    name, got = gradient_name("ArgmaxGrad"), {}

    @gc.register_gradient(name)
    def argmax_grad(op, grad, index_grad):
        got["index_grad"] = index_grad
        axis = op.get_attr("axis")
        mask = gc.one_hot(op.outputs[1], op.inputs[0].shape[axis])
        return mask * gc.reshape(grad, (-1, 1)) * 2.0

    x = gc.constant([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    with gc.gradient_override_map({"MaxWithArgmax": name}):
        values, index = gc.max_with_argmax(x, axis=1)
    (g,) = gc.gradients(values, x, grad_ys=[[1.0, 10.0]])
    assert_close(g.numpy(), [[0, 2, 0], [20, 0, 0]])
    assert got["index_grad"] is None  # an integer output carries no gradient, as in TensorFlow


def test_a_wrong_number_of_gradients_is_a_sentence(gradient_name):
    two, one = gradient_name("Two"), gradient_name("One")
    gc.register_gradient(two)(lambda op, grad: (grad, grad))
    gc.register_gradient(one)(lambda op, grad: grad)
    x, w = gc.constant([1.0, 2.0]), gc.constant(3.0)
    with gc.gradient_override_map({"Sign": two, "Mul": one}):
        s = gc.sign(x)
        m = x * w
    with pytest.raises(GradientError, match=f"gradient '{two}' for op 'sign' returned 2 "
                                            "gradients; the op has 1 inputs"):
        gc.gradients(s, x)
    with pytest.raises(GradientError, match=f"gradient '{one}' for op 'mul' returned one "
                                            "gradient; the op has 2 inputs: return a list with "
                                            r"one per input \(None where an input gets none\)"):
        gc.gradients(m, x)


def test_an_incompatible_gradient_shape_is_a_sentence(gradient_name):
    name = gradient_name("Shape")
    gc.register_gradient(name)(lambda op, grad: gc.constant(np.ones(4)))
    x = gc.constant([1.0, 2.0, 3.0], name="x")
    with gc.gradient_override_map({"Sign": name}):
        y = gc.sign(x)
    with pytest.raises(GradientError, match=fr"gradient '{name}' for op 'sign' returned shape "
                                            r"\(4,\) for input 0 \(x\) of shape \(3,\); expected "
                                            r"\(3,\) \(a scalar is broadcast\)"):
        gc.gradients(y, x)


def test_wrong_gradient_types_and_dtypes_are_sentences(gradient_name):
    text, f32 = gradient_name("Text"), gradient_name("F32")
    gc.register_gradient(text)(lambda op, grad: "oops")
    gc.register_gradient(f32)(lambda op, grad: gc.cast(grad, "float32"))
    x = gc.constant([1.0, 2.0])
    with gc.gradient_override_map({"Sign": text, "Neg": f32}):
        a, b = gc.sign(x), -x
    with pytest.raises(GradientError, match="returned a str for input 0; expected a tensor, "
                                            "a number or None"):
        gc.gradients(a, x)
    with pytest.raises(GradientError, match="returned float32 for input 0 of dtype float64"):
        gc.gradients(b, x)


def test_registering_a_taken_name_says_how_to_replace_it(gradient_name):
    name = gradient_name("Taken")
    gc.register_gradient(name)(lambda op, grad: grad * 2.0)
    with pytest.raises(RegistryError, match=f"gradient name '{name.upper()}' is taken by a "
                                            f"registered gradient \\('{name}'\\); pick another "
                                            "name, or pass replace=True to register_gradient to "
                                            "replace it on purpose"):
        gc.register_gradient(name.upper())  # names are case-insensitive
    with pytest.raises(RegistryError, match="'Tanh' is taken by an op type's own gradient"):
        gc.register_gradient("Tanh")
    gc.register_gradient(name, replace=True)(lambda op, grad: grad * 5.0)
    x = gc.constant(1.0)
    with gc.gradient_override_map({"Identity": name}):
        y = gc.identity(x)
    assert gc.gradients(y, x)[0].numpy() == 5.0
    with pytest.raises(RegistryError, match="non-empty string"):
        gc.register_gradient("")
    with pytest.raises(RegistryError, match="'hardtanh' is built in and cannot be removed"):
        gc.unregister_gradient("hardtanh")


@pytest.mark.parametrize("builtin,expected", [
    ("identity", [1, 1, 1, 1, 1]), ("hardtanh", [0, 1, 1, 1, 0]),
    ("reverse", [-1, -1, -1, -1, -1]), ("zero", [0, 0, 0, 0, 0])])
def test_builtin_named_gradients(builtin, expected):
    x = gc.constant([-2.0, -1.0, 0.5, 1.0, 3.0])
    with gc.gradient_override_map({"Sign": builtin}):
        y = gc.sign(x)
    (g,) = gc.gradients(gc.sum(y), x)
    assert g is not None  # "zero" blocks the value but keeps the input connected
    assert_close(g.numpy(), expected)
    assert_close(y.numpy(), np.sign(x.numpy()))


# ----- gradient_override_map -----
def test_override_keys_ignore_case_and_tensorflow_spelling(gradient_name):
    name = gradient_name("Seven")
    gc.register_gradient(name)(lambda op, *grads: grads[0] * 7.0)
    x = gc.constant([1.0, 2.0])
    for key in ("Sign", "SIGN", "sign"):
        with gc.gradient_override_map({key: name.lower()}):
            y = gc.sign(x)
        assert_close(gc.gradients(gc.sum(y), x)[0].numpy(), [7.0, 7.0])
    with gc.gradient_override_map({"ZeroOut": name, "LogSoftmax": name}):
        zeroed, _ = gc.zero_out(x)
        ls = gc.log_softmax(x)
    assert_close(gc.gradients(gc.sum(zeroed), x)[0].numpy(), [7.0, 7.0])
    assert_close(gc.gradients(ls, x)[0].numpy(), [7.0, 7.0])


def test_override_scopes_nest_and_restore():
    x = gc.constant([0.5, 2.0])
    with gc.gradient_override_map({"Sign": "identity"}):
        outer_before = gc.sign(x)
        with gc.gradient_override_map({"Sign": "reverse"}):
            inner = gc.sign(x)
        outer_after = gc.sign(x)
    plain = gc.sign(x)
    grads = [gc.gradients(gc.sum(t), x)[0].numpy() for t in (outer_before, inner, outer_after, plain)]
    assert_close(grads, [[1, 1], [-1, -1], [1, 1], [0, 0]])


def test_override_map_applies_only_to_ops_built_inside():
    x = gc.constant([0.5, 2.0])
    before = gc.sign(x)
    with gc.gradient_override_map({"Sign": "identity"}):
        y = before * 1.0 + gc.sign(x)
    assert_close(gc.gradients(gc.sum(y), x)[0].numpy(), [1, 1])


def test_an_unknown_gradient_name_fails_at_once():
    with pytest.raises(RegistryError, match="gradient_override_map: no gradient is registered "
                                            "as 'NoSuchGrad' \\(for op type 'Sign'\\); register "
                                            "it with @gc.register_gradient first"):
        gc.gradient_override_map({"Sign": "NoSuchGrad"})


def test_an_unused_entry_warns_and_a_used_one_does_not():
    x = gc.constant([1.0])
    with pytest.warns(gc.OverrideUnusedWarning, match="entry 'Sigmoid' -> 'identity' matched no "
                                                      "op: no op of type 'Sigmoid' was built"):
        with gc.gradient_override_map({"Sign": "identity", "Sigmoid": "identity"}) as scope:
            gc.sign(x)
    assert scope.unused == ["Sigmoid"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with gc.gradient_override_map({"Sign": "identity"}):
            gc.sign(x)
        with gc.gradient_override_map({"Tanh": "identity"}, warn_unused=False):
            pass


def test_a_scope_left_by_an_exception_is_removed_without_warning():
    x = gc.constant([1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ZeroDivisionError):
            with gc.gradient_override_map({"Sign": "reverse"}):
                raise ZeroDivisionError("inside the scope")
    assert gc.gradients(gc.sign(x), x)[0].numpy() == [0.0]


def test_second_derivatives_go_through_overrides():
    x = gc.constant([1.0, 2.0])
    with gc.gradient_override_map({"Identity": "reverse"}):
        y = gc.identity(x * x * x)
    (g,) = gc.gradients(gc.sum(y), x)
    assert_close(g.numpy(), [-3.0, -12.0])
    assert_close(gc.gradients(gc.sum(g), x)[0].numpy(), [-6.0, -12.0])


# ----- custom_gradient -----
@gc.custom_gradient
def cube(x):
    return x ** 3, lambda dy: dy * 3 * x ** 2


@gc.custom_gradient
def cube_with_wrong_gradient(x):
    return x ** 3, lambda dy: dy * 5.0 * x


def test_custom_gradient_first_and_second_derivatives():
    x = gc.constant([1.0, 2.0])
    y = cube(x)
    assert_close(y.numpy(), [1.0, 8.0])
    (g,) = gc.gradients(gc.sum(y), x)
    assert_close(g.numpy(), [3.0, 12.0])
    (h,) = gc.gradients(gc.sum(g), x)
    assert_close(h.numpy(), [6.0, 12.0])


def test_custom_gradient_is_used_instead_of_the_forward_derivative():
    x = gc.constant([1.0, 2.0])
    y = cube_with_wrong_gradient(x)
    (g,) = gc.gradients(gc.sum(y), x)
    assert_close(g.numpy(), [5.0, 10.0])
    assert_close(gc.gradients(gc.sum(g), x)[0].numpy(), [5.0, 5.0])
    (t,) = gc.true_gradients(gc.sum(y), x)
    assert_close(t.numpy(), [3.0, 12.0])
    assert_close(gc.true_gradients(gc.sum(t), x)[0].numpy(), [6.0, 12.0])
    assert_close(t.numpy(), fd_gradients(gc.sum(y), x)[0])


def test_custom_gradient_with_several_inputs_and_outputs():
    @gc.custom_gradient
    def pair(a, b):
        return (a * b, a + b), lambda d1, d2: (d1 * 100.0 + d2, None)

    a, b = gc.constant([1.0, 2.0]), gc.constant(3.0)
    p, s = pair(a, b)
    assert_close(p.numpy(), [3.0, 6.0])
    assert_close(s.numpy(), [4.0, 5.0])
    ga, gb = gc.gradients(p, [a, b])
    assert_close(ga.numpy(), [100.0, 100.0])  # the unused output's dy is zeros
    assert gb is None
    ga, gb = gc.gradients([p, s], [a, b])
    assert_close(ga.numpy(), [101.0, 101.0])
    ta, tb = gc.true_gradients([p, s], [a, b])
    assert_close(ta.numpy(), [4.0, 4.0])  # d(a*b + a + b)/da = b + 1
    assert_close(tb.numpy(), (1.0 + 1.0) + (1.0 + 2.0))  # sum over a of (a + 1)


def test_custom_gradient_errors_are_sentences():
    @gc.custom_gradient
    def two_args(x, rand):
        return x * 1.0, lambda dy: dy

    @gc.custom_gradient
    def no_grad_fn(x):
        return x * 2.0

    x = gc.constant([1.0])
    with pytest.raises(GradientError, match="the gradient function of custom_gradient "
                                            "'two_args' returned 1 gradient\\(s\\); the function "
                                            "has 2 input\\(s\\) \\(x, rand\\): return one "
                                            "gradient per input, None where an input gets none"):
        gc.gradients(two_args(x, 0.5), x)
    with pytest.raises(GradientError, match="custom_gradient function 'no_grad_fn' must return "
                                            "\\(output, grad_fn\\); it returned Tensor"):
        no_grad_fn(x)


# ----- stop_gradient, identity, grad_pass_through, reverse_gradient -----
def test_stop_gradient_and_identity():
    x = gc.constant([1.0, 2.0])
    s = gc.stop_gradient(x * x)
    assert_close(s.numpy(), [1.0, 4.0])
    assert gc.gradients(gc.sum(s), x) == [None]
    assert_close(gc.gradients(gc.sum(s * x), x)[0].numpy(), [1.0, 4.0])
    assert_close(gc.true_gradients(gc.sum(s), x)[0].numpy(), [2.0, 4.0])
    assert_close(gc.gradients(gc.sum(gc.identity(x) * 3.0), x)[0].numpy(), [3.0, 3.0])


def test_grad_pass_through_forwards_fn_and_passes_dy_back():
    x = gc.constant([-1.5, 0.5, 2.0])
    relu_ish = gc.grad_pass_through(lambda v: gc.where(v > 0, v, gc.zeros_like(v)))
    y = relu_ish(x)
    assert_close(y.numpy(), [0.0, 0.5, 2.0])
    (g,) = gc.gradients(y, x, grad_ys=[[1.0, 2.0, 3.0]])
    assert_close(g.numpy(), [1.0, 2.0, 3.0])
    (t,) = gc.true_gradients(y, x, grad_ys=[[1.0, 2.0, 3.0]])
    assert_close(t.numpy(), [0.0, 2.0, 3.0])

    a, b = gc.constant(2.0), gc.constant(5.0)
    prod = gc.grad_pass_through(gc.mul)(a, b)
    assert prod.numpy() == 10.0
    assert [g.numpy() for g in gc.gradients(prod, [a, b])] == [1.0, 1.0]
    assert [g.numpy() for g in gc.true_gradients(prod, [a, b])] == [5.0, 2.0]

    with pytest.raises(GradientError, match="expects fn to return one tensor, got float"):
        gc.grad_pass_through(lambda v: 1.0)(x)


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0])
def test_reverse_gradient(scale):
    x = gc.constant([1.0, -2.0])
    y = gc.reverse_gradient(x * x, scale)
    assert_close(y.numpy(), [1.0, 4.0])
    assert_close(gc.gradients(gc.sum(y), x)[0].numpy(), [-2.0 * scale, 4.0 * scale])
    assert_close(gc.true_gradients(gc.sum(y), x)[0].numpy(), [2.0, -4.0])
    assert y.op.get_attr("scale") == scale


def test_true_gradients_ignore_overrides():
    x = gc.constant([-2.0, 0.5])
    with gc.gradient_override_map({"Sign": "hardtanh", "Tanh": "reverse"}):
        y = gc.sign(x) + gc.tanh(x)
    d = 1 - np.tanh(x.numpy()) ** 2
    assert_close(gc.gradients(gc.sum(y), x)[0].numpy(), [0.0 - 1.0, 1.0 - 1.0])
    assert_close(gc.true_gradients(gc.sum(y), x)[0].numpy(), d)
    assert_close(gc.true_gradients(gc.sum(y), x)[0].numpy(), fd_gradients(gc.sum(y), x)[0])
