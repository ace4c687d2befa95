"""Every op's gradient rule against central differences (float64, random inputs, broadcasting)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from core_helpers import assert_close, check_gradients, fd_gradients

import gradcli as gc
from gradcli.core import registry
from gradcli.errors import GraphError
from gradcli.ops import OPS


# ----- input domains where each op is smooth -----
def anywhere(rng, shape):
    return rng.uniform(-2.0, 2.0, shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def nonzero(rng, shape):
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def off_integer(rng, shape):
    # at least 0.1 from every integer and every half-integer: floor, ceil and round are flat there
    return rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.4, shape)


def grid(rng, shape, offset=0.0):
    # multiples of 0.5 (+ offset): two grids with offsets 0 and 0.25 never tie
    return rng.integers(-4, 5, shape) * 0.5 + offset


def distinct(rng, shape):
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n) * 0.3 - 0.15 * n + rng.uniform(-0.05, 0.05, n)).reshape(shape)


def const(value):
    return gc.constant(value)


# ----- elementwise, one input -----
UNARY = [
    ("abs", gc.abs, nonzero), ("neg", gc.neg, anywhere), ("exp", gc.exp, anywhere),
    ("log", gc.log, positive), ("sqrt", gc.sqrt, positive), ("square", gc.square, anywhere),
    ("sin", gc.sin, anywhere), ("cos", gc.cos, anywhere), ("tanh", gc.tanh, anywhere),
    ("sigmoid", gc.sigmoid, anywhere), ("relu", gc.relu, nonzero),
    ("softplus", gc.softplus, anywhere), ("reciprocal", gc.reciprocal, nonzero),
    ("identity", gc.identity, anywhere), ("sign", gc.sign, nonzero),
    ("round", gc.round, off_integer), ("floor", gc.floor, off_integer),
    ("ceil", gc.ceil, off_integer),
]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
@pytest.mark.parametrize("name,fn,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradient_matches_central_differences(name, fn, domain, shape, rng):
    x = const(domain(rng, shape))
    y = fn(x)
    assert y.op.type == name
    check_gradients(y, [x], rng)


@pytest.mark.parametrize("name,fn", [("sign", gc.sign), ("round", gc.round),
                                     ("floor", gc.floor), ("ceil", gc.ceil)])
def test_step_functions_have_a_zero_gradient_not_none(name, fn):
    x = const([-1.7, 0.2, 2.4])
    (g,) = gc.gradients(gc.sum(fn(x) * x), [x])
    # d/dx (f(x) * x) = f(x) + 0 * x: only the zero rule leaves exactly f(x)
    assert_close(g.numpy(), fn(x).numpy(), rtol=0, atol=0)


def test_kinks_follow_tensorflow():
    x = const([-1.0, 0.0, 2.0])
    assert_close(gc.gradients(gc.sum(gc.relu(x)), x)[0].numpy(), [0, 0, 1])  # relu'(0) = 0
    assert_close(gc.gradients(gc.sum(gc.abs(x)), x)[0].numpy(), [-1, 0, 1])  # abs'(0) = 0


@pytest.mark.parametrize("name,fn", [("zeros_like", gc.zeros_like), ("ones_like", gc.ones_like)])
def test_constant_like_ops_pass_no_gradient(name, fn):
    x = const([1.0, 2.0])
    y = gc.sum(fn(x))
    assert gc.gradients(y, x) == [None]
    assert_close(gc.gradients(y, x, unconnected_gradients="zero")[0].numpy(), [0, 0])
    assert_close(fd_gradients(y, x)[0], [0, 0])


# ----- elementwise, two inputs, with broadcasting -----
BINARY = [
    ("add", gc.add, anywhere, anywhere), ("sub", gc.sub, anywhere, anywhere),
    ("mul", gc.mul, anywhere, anywhere), ("div", gc.div, anywhere, nonzero),
    ("pow", gc.pow, positive, anywhere),
    ("maximum", gc.maximum, grid, lambda r, s: grid(r, s, 0.25)),
    ("minimum", gc.minimum, grid, lambda r, s: grid(r, s, 0.25)),
]
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)),
               ((), (2, 3)), ((2, 3), ()), ((4, 1, 3), (2, 1)), ((1, 3), (2, 1, 1))]


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("name,fn,dom_x,dom_y", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradient_with_broadcasting(name, fn, dom_x, dom_y, shapes, rng):
    x, y = const(dom_x(rng, shapes[0])), const(dom_y(rng, shapes[1]))
    out = fn(x, y)
    assert out.op.type == name
    assert out.shape == np.broadcast_shapes(*shapes)
    check_gradients(out, [x, y], rng)


def test_maximum_and_minimum_ties_send_the_gradient_to_x():
    x, y = const([1.0, 2.0]), const([1.0, 3.0])
    for fn in (gc.maximum, gc.minimum):
        gx, gy = gc.gradients(gc.sum(fn(x, y)), [x, y])
        assert gx.numpy()[0] == 1.0 and gy.numpy()[0] == 0.0


def test_pow_with_a_negative_base_and_a_constant_exponent():
    x, p = const([-3.0, 2.0]), const(2.0)
    gx, gp = gc.gradients(gc.sum(x ** p), [x, p])
    assert_close(gx.numpy(), [-6.0, 4.0])
    # log(x) is undefined at x < 0: TensorFlow takes 0 there instead of NaN
    assert_close(gp.numpy(), 4.0 * np.log(2.0))


MATMUL_SHAPES = [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                 ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)),
                 ((2, 1, 3, 4), (3, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_gradient(shapes, rng):
    a, b = const(anywhere(rng, shapes[0])), const(anywhere(rng, shapes[1]))
    out = a @ b
    assert_close(out.numpy(), np.matmul(a.numpy(), b.numpy()))
    check_gradients(out, [a, b], rng)


@pytest.mark.parametrize("bounds", [((), ()), ((3,), ()), ((2, 3), (3,))], ids=str)
def test_clip_gradient_reaches_x_and_both_bounds(bounds, rng):
    x = const(grid(rng, (2, 3), 0.25))  # never equal to a bound on the 0.5 grid
    lo = const(np.full(bounds[0], -1.0))
    hi = const(np.full(bounds[1], 1.0))
    out = gc.clip(x, lo, hi)
    assert_close(out.numpy(), np.clip(x.numpy(), -1, 1))
    check_gradients(out, [x, lo, hi], rng)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2, 3))], ids=str)
def test_where_gradient_flows_to_the_chosen_branch(shapes, rng):
    cond = gc.constant(rng.random((2, 3)) > 0.5)
    a, b = const(anywhere(rng, shapes[0])), const(anywhere(rng, shapes[1]))
    out = gc.where(cond, a, b)
    check_gradients(out, [a, b], rng)
    ga, gb = gc.gradients(gc.sum(out), [a, b])
    assert gb.shape == b.shape
    mask = np.asarray(cond.numpy(), dtype=float)
    assert_close(np.sum(ga.numpy()) + np.sum(gb.numpy()), 6.0)
    assert_close(np.sum(ga.numpy()), mask.sum())


@pytest.mark.parametrize("fn", [gc.less, gc.less_equal, gc.greater, gc.greater_equal,
                                gc.equal, gc.not_equal])
def test_comparisons_are_not_differentiable(fn):
    x, y = const([1.0, 2.0]), const([2.0, 2.0])
    out = fn(x, y)
    assert out.dtype == np.bool_
    gx, gy = gc.gradients(gc.sum(gc.where(out, x * 3.0, x)), [x, y])
    assert gy is None
    assert_close(gx.numpy(), np.where(out.numpy(), 3.0, 1.0))


def test_cast_gradient_casts_back_and_stops_at_integers():
    x = const([1.5, -2.5])
    y32 = gc.cast(x, np.float32)
    (g,) = gc.gradients(gc.sum(gc.cast(y32 * y32, gc.dtype(x))), [x])
    assert g.dtype == np.float64
    assert_close(g.numpy(), [3.0, -5.0], rtol=1e-6)
    assert gc.gradients(gc.sum(gc.cast(gc.cast(x, "int64"), "float64")), x) == [None]


# ----- reductions -----
REDUCTIONS = [("sum", gc.sum, anywhere), ("mean", gc.mean, anywhere), ("max", gc.max, distinct),
              ("min", gc.min, distinct), ("logsumexp", gc.logsumexp, anywhere),
              ("prod", gc.prod, nonzero)]
REDUCTION_CASES = [pytest.param(name, fn, domain, axis, keepdims, id=f"{name}-{axis}-{keepdims}")
                   for name, fn, domain in REDUCTIONS for axis in [None, 0, 1, -1, (0, 2)]
                   for keepdims in (False, True)]


@pytest.mark.parametrize("name,fn,domain,axis,keepdims", REDUCTION_CASES)
def test_reduction_gradient(name, fn, domain, axis, keepdims, rng):
    x = const(domain(rng, (2, 3, 4)))
    out = fn(x, axis=axis, keepdims=keepdims)
    if name == "logsumexp":
        reference = lambda v, **k: np.log(np.sum(np.exp(v), **k))  # noqa: E731
    else:
        reference = getattr(np, name)
    assert_close(out.numpy(), reference(x.numpy(), axis=axis, keepdims=keepdims))
    check_gradients(out, [x], rng)


def test_max_and_min_share_the_gradient_among_ties():
    x = const([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    assert_close(gc.gradients(gc.max(x), x)[0].numpy(), [[0, 0.5, 0.5], [0, 0, 0]])
    assert_close(gc.gradients(gc.sum(gc.min(x, axis=1)), x)[0].numpy(),
                 [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])


def test_prod_gradient_is_exact_with_zeros():
    x = const([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]])
    (g,) = gc.gradients(gc.sum(gc.prod(x, axis=1)), x)
    assert_close(g.numpy(), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]], rtol=0, atol=0)
    # second order, zeros included: d2/dx_i dx_k prod = product of all but x_i and x_k
    x = const([2.0, 0.0, 3.0])
    (g,) = gc.gradients(gc.prod(x), x)
    hessian = [gc.gradients(g[k], x)[0].numpy() for k in range(3)]
    assert_close(hessian, [[0, 3, 0], [3, 0, 2], [0, 2, 0]], rtol=0, atol=0)


def test_prod_over_several_axes_is_exact_with_zeros_to_second_order():
    # d/dx_k of the product over axes (0, 2) is the product of the others in x_k's slice
    v = np.array([[[2.0, 0.0], [1.5, -1.0]], [[3.0, 0.5], [0.0, 0.0]]])  # shape (2, 2, 2)
    x = const(v)
    (g,) = gc.gradients(gc.sum(gc.prod(x, axis=(0, 2))), x)
    expected = np.zeros_like(v)
    for j in range(2):
        block = v[:, j, :].ravel()
        for k in range(4):
            expected[k // 2, j, k % 2] = np.prod(np.delete(block, k))
    assert_close(g.numpy(), expected, rtol=0, atol=0)
    # second order through the moved and merged axes: d2/dx_i dx_k = product of all but both
    hessian = gc.gradients(g[0, 0, 0], x)[0].numpy()
    assert_close(hessian[1, 0, :], [0.5 * 0.0, 3.0 * 0.0], rtol=0, atol=0)
    assert_close(hessian[0, 0, 1], 3.0 * 0.5, rtol=0, atol=0)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("fn", [gc.softmax, gc.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_gradient(fn, axis, rng):
    x = const(anywhere(rng, (2, 3, 4)))
    out = fn(x, axis=axis)
    e = np.exp(x.numpy())
    soft = e / e.sum(axis=axis, keepdims=True)
    assert_close(out.numpy(), soft if fn is gc.softmax else np.log(soft))
    check_gradients(out, [x], rng)


# ----- shape and indexing -----
@pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1)], ids=str)
def test_transpose_gradient(axes, rng):
    x = const(anywhere(rng, (2, 3, 4)))
    out = gc.transpose(x, axes)
    assert out.shape == np.transpose(x.numpy(), axes).shape
    check_gradients(out, [x], rng)


@pytest.mark.parametrize("shape", [(4, 6), (-1,), (2, -1, 2), 24], ids=str)
def test_reshape_gradient(shape, rng):
    x = const(anywhere(rng, (2, 3, 4)))
    check_gradients(gc.reshape(x, shape), [x], rng)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_gradient_splits_by_size(axis, rng):
    shapes = [[(1, 3, 2), (2, 3, 2)], [(2, 1, 2), (2, 4, 2)], [(2, 3, 1), (2, 3, 3)]][axis % 3]
    xs = [const(anywhere(rng, s)) for s in shapes]
    out = gc.concat(xs, axis=axis)
    assert_close(out.numpy(), np.concatenate([x.numpy() for x in xs], axis=axis))
    check_gradients(out, xs, rng)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_stack_gradient(axis, rng):
    xs = [const(anywhere(rng, (2, 3))) for _ in range(3)]
    out = gc.stack(xs, axis=axis)
    assert out.shape == np.stack([x.numpy() for x in xs], axis=axis).shape
    check_gradients(out, xs, rng)


INDEXES = [1, -1, slice(1, None), slice(None, None, -1), (slice(None), 2), (Ellipsis, 0),
           (None, 1), [0, 0, 2], (slice(None), [2, 0, 2]), (1, slice(0, 3, 2)), (0, 1)]


@pytest.mark.parametrize("index", INDEXES, ids=str)
def test_getitem_gradient_accumulates_repeated_indices(index, rng):
    x = const(anywhere(rng, (3, 3)))
    out = x[index]
    assert_close(out.numpy(), x.numpy()[index])
    check_gradients(out, [x], rng)


def test_getitem_gradient_of_repeated_index_counts_each_use():
    x = const([1.0, 2.0, 3.0])
    (g,) = gc.gradients(gc.sum(x[[0, 0, 2, 0]]), x)
    assert_close(g.numpy(), [3.0, 0.0, 1.0])


def test_one_hot_takes_integer_indices_and_passes_no_gradient():
    idx = gc.constant([0, 2], dtype="int64")
    oh = gc.one_hot(idx, 3)
    assert_close(oh.numpy(), [[1, 0, 0], [0, 0, 1]])
    assert oh.dtype == np.float64
    w = const([1.0, 2.0, 3.0])
    (g,) = gc.gradients(gc.sum(oh * w), w)
    assert_close(g.numpy(), [1.0, 0.0, 1.0])
    with pytest.raises(GraphError, match="integer indices"):
        gc.one_hot(gc.constant([0.0, 1.0]), 2)


# ----- multi-output ops -----
@pytest.mark.parametrize("shape", [(4,), (2, 3)], ids=str)
def test_zero_out_gradient_is_the_first_element_of_dy(shape, rng):
    x = const(anywhere(rng, shape))
    zeroed, index = gc.zero_out(x)
    assert index.dtype.kind == "i" and not index.differentiable
    expected = np.zeros(shape)
    expected.flat[0] = x.numpy().flat[0]
    assert_close(zeroed.numpy(), expected, rtol=0, atol=0)
    check_gradients(zeroed, [x], rng)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_max_with_argmax_gradient(axis, rng):
    x = const(distinct(rng, (3, 4)))
    values, idx = gc.max_with_argmax(x, axis=axis)
    assert_close(values.numpy(), np.max(x.numpy(), axis=axis))
    np.testing.assert_array_equal(idx.numpy(), np.argmax(x.numpy(), axis=axis))
    assert idx.dtype.kind == "i"
    check_gradients(values, [x], rng)
    # the index output is not differentiable: nothing flows back through it
    assert gc.gradients(gc.sum(gc.cast(idx, "float64")), x) == [None]


@pytest.mark.parametrize("name, np_fn", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_argmax_argmin_are_int64_numpy_indices_without_gradient(name, np_fn):
    v = np.array([[1.0, 3.0, 3.0, np.nan, np.nan], [2.0, -1.0, -1.0, 0.0, 2.0]])
    x = gc.variable(v)
    for axis in (0, 1, -1, -2):
        idx = getattr(gc, name)(x, axis=axis)
        assert idx.dtype == np.int64 and not idx.differentiable
        np.testing.assert_array_equal(gc.evaluate(idx), np_fn(v, axis=axis))
    assert gc.evaluate(getattr(gc, name)(x)).tolist() == ([3, 0] if name == "argmax" else [3, 1])
    x.assign(v[::-1])  # a replay after an assign reads the new values
    np.testing.assert_array_equal(gc.evaluate(idx), np_fn(v[::-1], axis=-2))
    assert gc.gradients(gc.sum(gc.cast(idx, "float64") * x), x)[0] is not None
    assert gc.gradients(gc.sum(gc.cast(idx, "float64")), x) == [None]
    with pytest.raises(GraphError, match="axis 2 is out of range"):
        getattr(gc, name)(x, axis=2)


# ----- completeness -----
COVERED_ELSEWHERE = {
    "stop_gradient", "grad_pass_through", "reverse_gradient",      # test_core_control.py
    "uniform", "normal", "bernoulli", "dtype", "logical_not",        # test_core_tensors.py
    "logical_and", "logical_or",
    # tests/oracles/test_activations_tf.py: against TensorFlow and torch, edges included
    "log1p", "expm1", "erf", "erfc", "atan", "asinh", "softsign", "leaky_relu", "elu", "relu6",
    "gelu", "silu", "hard_sigmoid", "heaviside",
    # tests/oracles/test_sparse_xent_tf.py (TF's op, second derivatives, labels) and
    # tests/ops/test_fused_kernels.py (the kernel against numpy)
    "sparse_softmax_cross_entropy_with_logits",
    # tests/oracles/test_ops_oracle.py: numpy values, TensorFlow gradients, every backend
    "sinh", "cosh",
    # a composite (no op or rule of its own): tests/ops/test_clip_by_norm_tf.py, against TF
    "clip_by_norm",
}


def test_every_op_of_the_language_is_public_and_tested_here_or_elsewhere():
    tested = ({u[0] for u in UNARY} | {b[0] for b in BINARY}
              | {"matmul", "clip", "where", "cast", "sum", "mean", "max", "min", "prod",
                 "logsumexp", "softmax", "log_softmax", "transpose", "reshape", "concat",
                 "stack", "getitem", "one_hot", "zero_out", "max_with_argmax", "zeros_like",
                 "argmax", "argmin",
                 "ones_like", "less", "less_equal", "greater", "greater_equal", "equal",
                 "not_equal"})
    assert set(OPS) - tested - COVERED_ELSEWHERE == set()
    for name in OPS:
        assert callable(getattr(gc, name)), name
        if name != "dtype" and not OPS[name].composite:  # a composite's parts have theirs
            assert registry.lookup(name) is not None, f"op {name!r} has no gradient rule"


def test_every_op_type_the_core_builds_has_a_gradient_rule():
    # gradient rules build internal ops (prod_others, sum_to, tanh_grad, ...): each needs a
    # rule of its own, or a gradient of a gradient fails
    source = "".join(p.read_text() for p in Path(gc.core.__file__).parent.glob("*.py"))
    builders = r"unary|binary|make_op|make_elementwise|elementwise[12]|_reduction|_random"
    types = set(re.findall(rf'(?:{builders})\(\s*"(\w+)"', source))
    assert len(types) > 25
    types |= {name for name in OPS if name != "dtype" and not OPS[name].composite}  # the table's
    assert sorted(t for t in types if registry.lookup(t) is None) == []


# ----- second derivatives: gradients of gradients against differences of the gradient -----
def _second_order_check(build, inputs, rng, rtol=1e-5, atol=1e-6):
    xs = [const(v) for v in inputs]
    out = build(*xs)
    w = rng.uniform(-1.0, 1.0, out.shape)
    firsts = gc.gradients(out, xs, grad_ys=[w], unconnected_gradients="zero")
    vs = [rng.uniform(-1.0, 1.0, x.shape) for x in xs]
    seconds = gc.gradients(firsts, xs, grad_ys=vs, unconnected_gradients="zero")
    numeric = fd_gradients(firsts, xs, vs, eps=1e-5)
    for i, (s, n) in enumerate(zip(seconds, numeric, strict=True)):
        assert_close(gc.evaluate(s), n, rtol=rtol, atol=atol, what=f"second derivative, input {i}")
    return seconds


SECOND_ORDER = [
    ("tanh", gc.tanh, lambda r: [anywhere(r, (2, 3))]),
    ("sigmoid", gc.sigmoid, lambda r: [anywhere(r, (2, 3))]),
    ("mul", gc.mul, lambda r: [anywhere(r, (2, 3)), anywhere(r, (3,))]),
    ("div", gc.div, lambda r: [anywhere(r, (2, 3)), nonzero(r, (3,))]),
    ("pow", gc.pow, lambda r: [positive(r, (2, 3)), anywhere(r, (2, 3))]),
    ("softmax", lambda x: gc.softmax(x, axis=-1), lambda r: [anywhere(r, (2, 4))]),
    ("log_softmax", lambda x: gc.log_softmax(x, axis=0), lambda r: [anywhere(r, (3, 2))]),
    ("logsumexp", lambda x: gc.logsumexp(x, axis=1), lambda r: [anywhere(r, (2, 4))]),
    ("matmul", gc.matmul, lambda r: [anywhere(r, (2, 3)), anywhere(r, (3, 2))]),
    ("exp_log", lambda x: gc.log(gc.exp(x) + x * x), lambda r: [positive(r, (3,))]),
    ("sqrt_reciprocal", lambda x: gc.sqrt(x) * gc.reciprocal(x), lambda r: [positive(r, (3,))]),
    ("sin_cos_softplus", lambda x: gc.sin(x) * gc.cos(x) + gc.softplus(x),
     lambda r: [anywhere(r, (3,))]),
    ("max_mean", lambda x: gc.max(x * x, axis=0) + gc.mean(x ** 3.0),
     lambda r: [distinct(r, (3, 2)) + 10.0]),
    ("getitem_concat", lambda x: gc.concat([x[1:] * x[:-1], gc.square(x)], axis=0),
     lambda r: [anywhere(r, (4,))]),
    ("prod_all", gc.prod, lambda r: [nonzero(r, (2, 3))]),
    ("prod_axis", lambda x: gc.prod(x, axis=1), lambda r: [nonzero(r, (2, 3, 2))]),
    ("prod_zeros", lambda x: gc.prod(x, axis=0), lambda r: [np.array([[0.0, 1.5], [2.0, 0.0],
                                                                      [0.5, 0.0]])]),
]


@pytest.mark.parametrize("name,fn,make", SECOND_ORDER, ids=[s[0] for s in SECOND_ORDER])
def test_second_derivative(name, fn, make, rng):
    _second_order_check(fn, make(rng), rng)


def test_second_derivatives_of_tanh_and_sigmoid_in_closed_form():
    x = const([-1.0, 0.3, 2.0])
    t, s = np.tanh(x.numpy()), 1 / (1 + np.exp(-x.numpy()))
    (g,) = gc.gradients(gc.sum(gc.tanh(x)), x)
    (h,) = gc.gradients(gc.sum(g), x)
    assert_close(h.numpy(), -2 * t * (1 - t * t))
    (g,) = gc.gradients(gc.sum(gc.sigmoid(x)), x)
    (h,) = gc.gradients(gc.sum(g), x)
    assert_close(h.numpy(), s * (1 - s) * (1 - 2 * s))
    (h3,) = gc.gradients(gc.sum(h), x)  # third order goes through the gradient kernels' rules
    assert_close(h3.numpy(), fd_gradients(h, x)[0], rtol=1e-5)
