"""Elementwise float ops keep no build-time value; every reader of a value still gets it right
(numpy computed directly is the oracle)."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import GraphError

X = np.array([-1.2, -0.4, 0.3, 0.9])


def _chain(x, n):
    y = x
    for _ in range(n):
        y = gc.tanh(y * 0.9 + 0.1)
    return y


def _numpy_chain(x, n):
    for _ in range(n):
        x = np.tanh(x * 0.9 + 0.1)
    return x


def test_a_chain_keeps_no_values_but_numpy_is_right():
    x = gc.variable(X)
    y = _chain(x, 50)
    kept = [t for op in gc.core.graph.walk_ops([y]) if op.inputs for t in op.outputs
            if t._value is not None]
    assert kept == []
    np.testing.assert_array_equal(y.numpy(), _numpy_chain(X, 50))
    assert y._value is not None and y.op.inputs[0]._value is None  # only what was asked for


def test_values_follow_assign_and_ops_that_run_at_build():
    x = gc.variable(X)
    y = _chain(x, 20)
    s = gc.sum(y)  # a reduction runs its kernel at build: it reads the chain's value
    assert s.numpy() == pytest.approx(_numpy_chain(X, 20).sum(), rel=1e-15)
    x.assign(X * 2)
    np.testing.assert_array_equal(y.numpy(), _numpy_chain(X * 2, 20))
    assert s.numpy() == pytest.approx(_numpy_chain(X * 2, 20).sum(), rel=1e-15)
    z = gc.sum(y * y)  # built after the assign, from the new values
    assert z.numpy() == pytest.approx((_numpy_chain(X * 2, 20) ** 2).sum(), rel=1e-14)


def test_gradients_of_lazy_values_and_a_rule_reading_them():
    seen = {}

    @gc.register_gradient("reads_values")
    def _reads(op, g):
        seen["x"], seen["y"] = op.inputs[0].numpy(), op.outputs[0].numpy()
        return g * 3.0, None

    try:
        x = gc.variable(X)
        h = _chain(x, 5)
        with gc.gradient_override_map({"mul": "reads_values"}):
            y = h * 2.0
        (g,) = gc.gradients(gc.sum(y), [x])
        np.testing.assert_array_equal(seen["x"], _numpy_chain(X, 5))
        np.testing.assert_array_equal(seen["y"], _numpy_chain(X, 5) * 2.0)
        d, v = np.ones(4) * 3.0, X  # d/dx of the chain, by hand
        for _ in range(5):
            v = np.tanh(v * 0.9 + 0.1)
        for k in range(5, 0, -1):
            vk = _numpy_chain(X, k)
            d = d * (1 - vk ** 2) * 0.9
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-13)
    finally:
        gc.unregister_gradient("reads_values")


def test_shapes_dtypes_and_errors_without_running_kernels():
    a = gc.variable(np.ones((3, 1), np.float32))
    b = gc.constant(np.ones(4, np.float32))
    c = gc.where(a > 0.5, a * b, gc.sqrt(a) - 2.0)
    assert c.shape == (3, 4) and c.dtype == np.float32
    assert (a < b).dtype == np.bool_ and (a < b).shape == (3, 4)
    np.testing.assert_array_equal(c.numpy(), np.ones((3, 4), np.float32))
    with pytest.raises(GraphError, match="cannot run on inputs of shape"):
        gc.variable(np.ones(3)) + gc.variable(np.ones(4))
    k = gc.constant(np.array([2, 3]))  # integers: run at build, so int ** -1 is refused there
    with pytest.raises(GraphError):
        gc.pow(gc.cast(k, np.int64), gc.constant(np.array([-1, -1]), dtype=np.int64))


def test_nonfinite_location_and_evaluate_with_lazy_values():
    x = gc.variable(np.array([1.0, -1.0]))
    y = gc.log(x) * 2.0 + 1.0
    found = gc.find_nonfinite(y)
    assert found is not None and found.op.type == "log"
    with np.errstate(invalid="ignore"):
        want = np.log([1.0, -1.0]) * 2.0 + 1.0
    np.testing.assert_array_equal(gc.evaluate(y), want)
    np.testing.assert_array_equal(float(gc.sum(gc.exp(x * 0.0))), 2.0)


@pytest.mark.parametrize("reduce, axis, keepdims", [
    ("sum", None, False), ("mean", 1, True), ("max", (0, 2), False), ("min", -1, True),
    ("prod", 0, False), ("logsumexp", (1, 2), True)])
def test_reductions_keep_no_value_and_match_numpy(reduce, axis, keepdims):
    v = np.random.default_rng(3).normal(size=(2, 3, 4)).astype(np.float32)
    x = gc.variable(v)
    r = getattr(gc, reduce)(x * 1.5, axis=axis, keepdims=keepdims)
    with np.errstate(all="ignore"):
        if reduce == "logsumexp":
            m = np.max(v * 1.5, axis=axis, keepdims=True)
            want = np.log(np.sum(np.exp(v * 1.5 - m), axis=axis, keepdims=True)) + m
            want = want if keepdims else np.squeeze(want, axis=axis)
        else:
            want = getattr(np, reduce)(v * np.float32(1.5), axis=axis, keepdims=keepdims)
    assert r._value is None and r.shape == want.shape and r.dtype == want.dtype == np.float32
    np.testing.assert_allclose(r.numpy(), want, rtol=1e-6)


def test_an_empty_reduction_is_still_refused_at_build():
    # max over an empty axis is TensorFlow's -inf (tests/backends/test_backend_empty_reductions.py);
    # argmax over one has no answer, in TensorFlow either
    with pytest.raises(GraphError, match="cannot run"):
        gc.argmax(gc.variable(np.zeros((0, 3))), axis=0)
    assert (gc.max(gc.variable(np.zeros((0, 3))), axis=0).numpy() == -np.inf).all()


def test_assign_all_keeps_own_arrays_casts_others_and_stales_kept_values():
    from gradcli.core.graph import assign_all

    a, b = gc.variable(X), gc.variable(X[:2])
    s = gc.sum(a) + gc.sum(b)  # reductions keep their build-time values
    new_a = X * 3.0
    assign_all([a, b], [new_a, [1, 2]])  # an own array, kept; a list, cast as assign does
    assert a._value is new_a
    assert b._value.dtype == np.float64 and b._value.tolist() == [1.0, 2.0]
    assert s.numpy() == pytest.approx(X.sum() * 3.0 + 3.0, rel=1e-15)
    with pytest.raises(GraphError, match="shape"):
        assign_all([a, b], [X * 4.0, np.ones(3)])  # the second refused
    assert s.numpy() == pytest.approx(X.sum() * 4.0 + 3.0, rel=1e-15)  # the first was kept


# The generated builders take a shortcut for two tensors of one dtype (and a float beside a
# tensor): the result's shape and dtype must still be numpy's, 0-d beside a vector either way
# round, integers still run at build, and a memory budget still computes values at build.
_PAIRS = [
    (np.float64(0.5), np.array([1.0, -2.0, 3.0])),
    (np.array([1.0, -2.0, 3.0]), np.float64(0.5)),
    (np.array([1.0, -2.0, 3.0], np.float32), np.array([0.25, 4.0, -1.0], np.float32)),
    (np.array([[1.0], [2.0]]), np.array([3.0, 4.0, 5.0])),
    (np.array([1, 2, 3]), np.array([4, 5, 6])),
]


@pytest.mark.parametrize("a,b", _PAIRS)
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "maximum"])
def test_a_generated_binary_builder_gives_numpys_shape_dtype_and_value(op, a, b):
    x, y = gc.constant(a, dtype=a.dtype), gc.constant(b, dtype=b.dtype)
    z = getattr(gc, op)(x, y)
    expected = getattr(np, {"add": "add", "mul": "multiply", "sub": "subtract",
                            "div": "true_divide", "maximum": "maximum"}[op])(a, b)
    assert (z.shape, z.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(z.numpy(), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float_beside_a_tensor_and_a_unary_builder_keep_the_tensors_dtype(dtype):
    a = np.array([0.5, -1.5], dtype)
    z = gc.tanh(gc.constant(a, dtype=dtype) * 1.0001)
    expected = np.tanh(a * dtype(1.0001))
    assert (z.shape, z.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(z.numpy(), expected)


def test_under_a_memory_budget_the_builders_compute_values_at_build():
    from gradcli.core import budget as budgets
    with budgets.memory_budget(10**9):
        z = gc.tanh(gc.constant(X) * gc.constant(X))
    assert z._value is not None
    np.testing.assert_array_equal(z.numpy(), np.tanh(X * X))
