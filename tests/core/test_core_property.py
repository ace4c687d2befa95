"""Random expression trees of smooth ops with broadcasting: gc.gradients against finite
differences, and against torch.autograd (first and second order) where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
from core_helpers import assert_close, fd_gradients
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcli as gc

LEAF_SHAPES = [(2, 3), (3,), (1, 3), (2, 1), ()]
N_LEAVES = 3
UNARY = ["tanh", "sigmoid", "sin", "cos", "softplus", "square", "neg", "exp_tanh",
         "log1p_square", "sqrt1p_square", "recip1p_square"]
BINARY = ["add", "sub", "mul", "safe_div", "safe_pow"]
AXIS_OPS = ["sum", "mean", "logsumexp", "softmax", "log_softmax"]  # reductions keep dims

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=60,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def expressions(draw, depth=4):
    """(leaf shapes, value seed, tree, output shape); trees are nested tuples."""
    shapes = [draw(st.sampled_from(LEAF_SHAPES)) for _ in range(N_LEAVES)]
    seed = draw(st.integers(0, 2 ** 16))

    def node(budget):
        kinds = ["leaf"] if budget == 0 else ["leaf", "unary", "binary", "binary", "axis"]
        if budget == depth:
            kinds = kinds[1:]  # the root is an op: a bare leaf tests nothing
        kind = draw(st.sampled_from(kinds))
        if kind == "leaf":
            i = draw(st.integers(0, N_LEAVES - 1))
            return ("leaf", i), shapes[i]
        if kind == "unary":
            child, shape = node(budget - 1)
            return ("unary", draw(st.sampled_from(UNARY)), child), shape
        if kind == "binary":
            (left, ls), (right, rs) = node(budget - 1), node(budget - 1)
            return ("binary", draw(st.sampled_from(BINARY)), left, right), np.broadcast_shapes(ls, rs)
        child, shape = node(budget - 1)
        if not shape:
            return child, shape
        name, axis = draw(st.sampled_from(AXIS_OPS)), draw(st.integers(0, len(shape) - 1))
        kept = shape if name in ("softmax", "log_softmax") else \
            tuple(1 if i == axis else n for i, n in enumerate(shape))
        return ("axis", name, axis, child), kept

    tree, shape = node(depth)
    return shapes, seed, tree, tuple(shape)


class GcOps:
    unary = {
        "tanh": gc.tanh, "sigmoid": gc.sigmoid, "sin": gc.sin, "cos": gc.cos,
        "softplus": gc.softplus, "square": gc.square, "neg": lambda x: -x,
        "exp_tanh": lambda x: gc.exp(gc.tanh(x)), "log1p_square": lambda x: gc.log(1.0 + x * x),
        "sqrt1p_square": lambda x: gc.sqrt(1.0 + x * x),
        "recip1p_square": lambda x: gc.reciprocal(1.0 + x * x),
    }
    binary = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "safe_div": lambda a, b: a / (1.0 + b * b),
        "safe_pow": lambda a, b: gc.pow(1.0 + a * a, gc.tanh(b)),
    }
    axis = {
        "sum": lambda x, ax: gc.sum(x, axis=ax, keepdims=True),
        "mean": lambda x, ax: gc.mean(x, axis=ax, keepdims=True),
        "logsumexp": lambda x, ax: gc.logsumexp(x, axis=ax, keepdims=True),
        "softmax": lambda x, ax: gc.softmax(x, axis=ax),
        "log_softmax": lambda x, ax: gc.log_softmax(x, axis=ax),
    }


def torch_ops(torch):
    class TorchOps:
        unary = {
            "tanh": torch.tanh, "sigmoid": torch.sigmoid, "sin": torch.sin, "cos": torch.cos,
            "softplus": torch.nn.functional.softplus, "square": torch.square,
            "neg": lambda x: -x, "exp_tanh": lambda x: torch.exp(torch.tanh(x)),
            "log1p_square": lambda x: torch.log(1.0 + x * x),
            "sqrt1p_square": lambda x: torch.sqrt(1.0 + x * x),
            "recip1p_square": lambda x: torch.reciprocal(1.0 + x * x),
        }
        binary = {
            "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "safe_div": lambda a, b: a / (1.0 + b * b),
            "safe_pow": lambda a, b: torch.pow(1.0 + a * a, torch.tanh(b)),
        }
        axis = {
            "sum": lambda x, ax: x.sum(dim=ax, keepdim=True),
            "mean": lambda x, ax: x.mean(dim=ax, keepdim=True),
            "logsumexp": lambda x, ax: torch.logsumexp(x, dim=ax, keepdim=True),
            "softmax": lambda x, ax: torch.softmax(x, dim=ax),
            "log_softmax": lambda x, ax: torch.log_softmax(x, dim=ax),
        }
    return TorchOps


def build(tree, leaves, ops):
    kind = tree[0]
    if kind == "leaf":
        return leaves[tree[1]]
    if kind == "unary":
        return ops.unary[tree[1]](build(tree[2], leaves, ops))
    if kind == "binary":
        return ops.binary[tree[1]](build(tree[2], leaves, ops), build(tree[3], leaves, ops))
    return ops.axis[tree[1]](build(tree[3], leaves, ops), tree[2])


def _inputs(shapes, seed, out_shape):
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-1.5, 1.5, s) for s in shapes]
    weights = rng.uniform(-1.0, 1.0, out_shape)
    directions = [rng.uniform(-1.0, 1.0, s) for s in shapes]
    return values, weights, directions


@settings(SETTINGS, max_examples=120)
@given(expressions(depth=5))
def test_random_trees_against_central_differences(case):
    shapes, seed, tree, out_shape = case
    values, weights, _ = _inputs(shapes, seed, out_shape)
    leaves = [gc.variable(v) for v in values]
    y = build(tree, leaves, GcOps)
    assert y.shape == out_shape
    analytic = gc.gradients(y, leaves, grad_ys=[weights], unconnected_gradients="zero")
    numeric = fd_gradients(y, leaves, [weights])
    for i, (a, n) in enumerate(zip(analytic, numeric, strict=True)):
        assert a.shape == shapes[i]
        assert_close(a.numpy(), n, rtol=1e-5, atol=1e-6, what=f"leaf {i} of {tree}")


@settings(SETTINGS, max_examples=100)
@given(expressions(depth=5))
def test_random_trees_against_torch_autograd(case):
    torch = pytest.importorskip("torch")
    shapes, seed, tree, out_shape = case
    values, weights, directions = _inputs(shapes, seed, out_shape)

    leaves = [gc.variable(v) for v in values]
    y = build(tree, leaves, GcOps)
    firsts = gc.gradients(y, leaves, grad_ys=[weights], unconnected_gradients="zero")
    seconds = gc.gradients(firsts, leaves, grad_ys=directions, unconnected_gradients="zero")

    t_leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    t_y = build(tree, t_leaves, torch_ops(torch))
    if not t_y.requires_grad:  # a tree without leaves cannot happen, but be explicit
        pytest.fail(f"torch tree {tree} does not depend on its leaves")
    t_firsts = torch.autograd.grad(t_y, t_leaves, grad_outputs=torch.tensor(weights),
                                   create_graph=True, allow_unused=True)
    t_firsts = [torch.zeros_like(leaf) if g is None else g
                for g, leaf in zip(t_firsts, t_leaves, strict=True)]
    needed = [(g, torch.tensor(d)) for g, d in zip(t_firsts, directions, strict=True)
              if g.requires_grad]
    t_seconds = [None] * N_LEAVES
    if needed:
        t_seconds = torch.autograd.grad([g for g, _ in needed], t_leaves,
                                        grad_outputs=[d for _, d in needed], allow_unused=True)

    assert_close(y.numpy(), t_y.detach().numpy(), rtol=1e-10, atol=1e-12, what=str(tree))
    for i in range(N_LEAVES):
        assert_close(firsts[i].numpy(), t_firsts[i].detach().numpy(), rtol=1e-9, atol=1e-11,
                     what=f"first derivative, leaf {i} of {tree}")
        expected = np.zeros(shapes[i]) if t_seconds[i] is None else t_seconds[i].numpy()
        assert_close(seconds[i].numpy(), expected, rtol=1e-8, atol=1e-10,
                     what=f"second derivative, leaf {i} of {tree}")
