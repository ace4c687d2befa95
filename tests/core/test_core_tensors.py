"""Tensors, dtypes, operators, indexing, evaluation, assignment, feeds and replay."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from core_helpers import assert_close, uids_used

import gradcli as gc
from gradcli.core.evaluate import _CACHE
from gradcli.errors import GradcliError, GraphError


# ----- construction and dtypes -----
@pytest.mark.parametrize("value", [3, [1, 2, 3], [[1, 2], [3, 4]], 2.5, [1.0, 2]])
def test_python_numbers_become_float64(value):
    for t in (gc.constant(value), gc.variable(value)):
        assert t.dtype == np.float64
        assert_close(t.numpy(), np.asarray(value, dtype=float))


@pytest.mark.parametrize("dtype", ["float32", np.float32])
def test_float32_on_request(dtype):
    c, v = gc.constant([1, 2], dtype=dtype), gc.variable(3, dtype=dtype)
    assert c.dtype == np.float32 and v.dtype == np.float32
    assert c.numpy().dtype == np.float32


def test_numpy_arrays_and_booleans_keep_their_dtype():
    assert gc.constant(np.array([1, 2], dtype=np.int32)).dtype == np.int32
    assert gc.constant(np.array([1.0], dtype=np.float32)).dtype == np.float32
    assert gc.constant([True, False]).dtype == np.bool_


def test_variable_attributes():
    v = gc.variable([1.0, 2.0], name="w")
    assert v.name == "w" and v.trainable
    assert not gc.variable(1.0, trainable=False).trainable
    assert not gc.variable(np.array([1, 2]), trainable=True).trainable  # integers cannot train
    assert isinstance(v, gc.Variable) and isinstance(v, gc.Tensor)


def test_constant_from_a_string_is_refused():
    with pytest.raises(GraphError, match="cannot make a tensor from"):
        gc.constant(["a", "b"])


def test_mixing_float32_and_float64_is_a_graph_error():
    a, b = gc.constant([1.0], dtype="float32"), gc.constant([1.0])
    for build in (lambda: a + b, lambda: b * a, lambda: gc.maximum(a, b), lambda: a @ b,
                  lambda: gc.where(gc.constant([True]), a, b)):
        with pytest.raises(GraphError, match="of a float(32|64) tensor and a float(32|64) tensor is not "
                                             "defined.*; cast one of them first"):
            build()
    with pytest.raises(GraphError, match="float64 tensor is not defined"):
        gc.concat([a, b])
    # plain numbers take the tensor's float dtype, as in TensorFlow
    assert (a + 1.5).dtype == np.float32 and (2 * a).dtype == np.float32
    assert (gc.cast(a, "float64") + b).dtype == np.float64


def _mixed_model(dtype):
    x = gc.variable([[0.5, -0.9, 2.0], [1.5, 0.25, -0.75]], dtype=dtype)
    w = gc.variable([0.1, 0.2, 0.3], dtype=dtype)
    h = gc.tanh(x * w + 1.0) ** 2 / (1 + gc.exp(-x))
    loss = gc.mean(gc.softmax(h, axis=1) * gc.log_softmax(gc.transpose(h) @ h, axis=0)[:2]) \
        + gc.logsumexp(gc.clip(x, -1, 1)) + gc.sum(gc.sqrt(gc.abs(x) + 1)) + gc.max(x)
    return loss, x, w


def test_float32_stays_float32_through_forward_and_gradients():
    loss, x, w = _mixed_model("float32")
    assert loss.dtype == np.float32 and loss.numpy().dtype == np.float32
    gx, gw = gc.gradients(loss, [x, w])
    (hx,) = gc.gradients(gc.sum(gx * gx), x)
    for g in (gx, gw, hx):
        assert g.dtype == np.float32
        assert np.asarray(gc.evaluate(g)).dtype == np.float32
    numeric = gc.numeric_gradients(loss, [x])[0]
    assert numeric.dtype == np.float32
    assert_close(gx.numpy(), numeric, rtol=2e-2, atol=2e-3)
    loss64, x64, w64 = _mixed_model("float64")
    for g32, g64 in zip((gx, gw), gc.gradients(loss64, [x64, w64]), strict=True):
        assert_close(g32.numpy(), g64.numpy(), rtol=1e-4, atol=1e-6)


# ----- operators -----
def test_operators_build_the_named_ops_with_numpy_values():
    a = gc.constant([[1.0, 2.0], [3.0, 4.0]])
    b = gc.constant([0.5, -1.0])
    av, bv = a.numpy(), b.numpy()
    cases = [(a + b, "add", av + bv), (a - b, "sub", av - bv), (a * b, "mul", av * bv),
             (a / b, "div", av / bv), (a ** 2, "pow", av ** 2), (a @ b, "matmul", av @ bv),
             (-a, "neg", -av), (2 - a, "sub", 2 - av), (1 / a, "div", 1 / av),
             (2 ** b, "pow", 2 ** bv), (np.array([1.0, 2.0]) * b, "mul", np.array([1.0, 2.0]) * bv),
             (np.eye(2) @ b, "matmul", np.eye(2) @ bv), (np.float64(3.0) * b, "mul", 3.0 * bv)]
    for t, op_type, expected in cases:
        assert isinstance(t, gc.Tensor) and t.op.type == op_type
        assert_close(t.numpy(), expected)


def test_comparisons_and_logical_operators():
    a, b = gc.constant([1.0, 2.0, 3.0]), gc.constant([2.0, 2.0, 2.0])
    np.testing.assert_array_equal((a < b).numpy(), [True, False, False])
    np.testing.assert_array_equal((a <= b).numpy(), [True, True, False])
    np.testing.assert_array_equal((a > b).numpy(), [False, False, True])
    np.testing.assert_array_equal((a >= b).numpy(), [False, True, True])
    np.testing.assert_array_equal((2.5 < a).numpy(), [False, False, True])
    np.testing.assert_array_equal(((a > 1) & (a < 3)).numpy(), [False, True, False])
    np.testing.assert_array_equal(((a < 2) | (a > 2)).numpy(), [True, False, True])
    np.testing.assert_array_equal((~(a > 1)).numpy(), [True, False, False])
    np.testing.assert_array_equal(gc.logical_and(a > 1, a < 3).numpy(), [False, True, False])
    np.testing.assert_array_equal(gc.logical_or(a < 2, a > 2).numpy(), [True, False, True])
    np.testing.assert_array_equal(gc.logical_not(a > 1).numpy(), [True, False, False])
    np.testing.assert_array_equal(gc.equal(a, b).numpy(), [False, True, False])
    np.testing.assert_array_equal(gc.not_equal(a, b).numpy(), [True, False, True])
    # gradients pass through a where() built from them to the float inputs only
    (g,) = gc.gradients(gc.sum(gc.where((a > 1) & ~(a > 2), a * a, a)), a)
    assert_close(g.numpy(), [1.0, 4.0, 1.0])


def test_equality_is_identity_so_tensors_stay_hashable():
    a = gc.constant(1.0)
    b = gc.constant(1.0)
    assert (a == a) is True and (a == b) is False and (a != b) is True
    assert len({a: 1, b: 2}) == 2


def test_a_tensor_has_no_truth_value():
    with pytest.raises(GraphError, match="no truth value .* use gc.where"):
        if gc.constant(1.0) > 0:
            pass


def test_indexing_and_slicing():
    v = np.arange(24.0).reshape(2, 3, 4)
    x = gc.constant(v)
    for index in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0),
                  (0, slice(None, None, 2)), ([1, 0],), (0, [2, 2, 0])]:
        assert_close(x[index].numpy(), v[index])
    with pytest.raises(GraphError, match="indexing with a tensor is not supported"):
        x[gc.constant(0, dtype="int64")]
    with pytest.raises(GraphError, match="cannot run on inputs of shape"):
        x[5]


def test_iteration_and_unpacking_stop_at_the_end():
    a, b = gc.constant([1.0, 2.0])
    assert a.numpy() == 1.0 and b.numpy() == 2.0
    assert [float(t) for t in gc.constant([[1.0], [2.0], [3.0]])[:, 0]] == [1.0, 2.0, 3.0]
    assert len(gc.constant(np.zeros((4, 2)))) == 4
    with pytest.raises(GraphError, match="0-d"):
        len(gc.constant(1.0))


def test_shapes_and_errors_name_the_op():
    with pytest.raises(GraphError, match=r"op 'add' cannot run on inputs of shape \(2,\) float64, "
                                         r"\(3,\) float64"):
        gc.constant([1.0, 2.0]) + gc.constant([1.0, 2.0, 3.0])
    with pytest.raises(GraphError, match="axis 3 is out of range for a tensor of shape"):
        gc.sum(gc.constant(np.ones((2, 2))), axis=3)
    with pytest.raises(GraphError, match="has no attribute 'nope'; it has"):
        gc.sum(gc.constant([1.0]), axis=0).op.get_attr("nope")
    assert gc.sum(gc.constant(np.ones((2, 3))), axis=-1).op.get_attr("axis") == (1,)
    assert issubclass(GraphError, GradcliError)


# ----- evaluation, assignment, feeds -----
def test_assign_changes_later_evaluations():
    w = gc.variable([1.0, 2.0])
    y = gc.sum(w * w) + 1.0
    assert y.numpy() == 6.0
    w.assign([3, 4])
    assert w.numpy().dtype == np.float64
    assert y.numpy() == 26.0
    assert gc.evaluate(y) == 26.0
    assert_close(gc.evaluate([w, y])[0], [3.0, 4.0])
    with pytest.raises(GraphError, match=r"cannot assign a value of shape \(3,\) to variable "
                                         r".* of shape \(2,\)"):
        w.assign([1.0, 2.0, 3.0])


def test_evaluate_feeds_replace_any_tensor_for_one_run():
    x = gc.variable(2.0)
    h = x * 3.0
    y = h + x
    assert gc.evaluate(y, feed={x: 10.0}) == 40.0
    assert gc.evaluate(y, feed={h: 1.0}) == 3.0
    assert gc.evaluate([y, h], feed={h: 1.0, x: 5.0}) == [6.0, 1.0]
    assert y.numpy() == 8.0 and x.numpy() == 2.0  # a feed changes nothing for later runs
    with pytest.raises(GraphError, match=r"cannot feed a value of shape \(2,\)"):
        gc.evaluate(y, feed={x: [1.0, 2.0]})
    with pytest.raises(GraphError, match="evaluate\\(\\) fetches tensors, got float"):
        gc.evaluate([y, 1.0])


def test_feeding_one_output_of_a_multi_output_op():
    x = gc.variable([3.0, 1.0, 2.0])
    zeroed, index = gc.zero_out(x)
    # the index path is walked first, so the op is computed, yet the fed output must win
    y = gc.cast(index, "float64") + zeroed * 2.0
    assert_close(gc.evaluate(y, feed={zeroed: [10.0, 10.0, 10.0]}), [20.0, 20.0, 20.0])
    assert_close(gc.evaluate(y), [6.0, 0.0, 0.0])


def test_conversions_to_numpy_and_python():
    t = gc.variable([[1.0, 2.0]])
    assert isinstance(t.numpy(), np.ndarray)
    assert_close(np.asarray(t * 2.0), [[2.0, 4.0]])
    assert float(gc.sum(t)) == 3.0
    assert gc.evaluate([t, t])[1].shape == (1, 2)
    assert (t.shape, t.ndim, t.size, t.dtype) == ((1, 2), 2, 2, np.float64)


def test_results_are_copies():
    c = gc.constant([1.0, 2.0])
    v = gc.evaluate(c)
    v[0] = 99.0
    c.numpy()[1] = 99.0
    assert_close(c.numpy(), [1.0, 2.0])


def test_replay_creates_no_ops_and_reuses_the_schedule():
    w = gc.variable(np.linspace(-1, 1, 5))
    x = gc.variable(np.ones(5))
    loss = gc.sum(gc.tanh(w * x) ** 2)
    (g,) = gc.gradients(loss, w)
    first = gc.evaluate([loss, g])
    gc.evaluate([loss, g])  # the first evaluation is a one-shot; the second compiles
    schedules = len(_CACHE)
    key = ((loss.uid, g.uid), ())
    schedule = _CACHE[key]

    def replays():
        for step in range(5):
            w.assign(np.linspace(-1, 1, 5) * step)
            gc.evaluate([loss, g])
            gc.evaluate([loss, g], feed={x: np.full(5, step)})
            loss.numpy()

    assert uids_used(replays) == 0
    assert _CACHE[key] is schedule
    assert len(_CACHE) <= schedules + 3  # the feed variant and loss alone
    w.assign(np.linspace(-1, 1, 5))
    assert_close(gc.evaluate([loss, g])[1], first[1])
    w.assign(np.linspace(-1, 1, 5) * 2)
    t = np.tanh(np.linspace(-1, 1, 5) * 2)
    assert_close(g.numpy(), 2 * t * (1 - t * t))


def test_function_replays_with_feeds():
    x = gc.variable(np.zeros(3))
    y = gc.sum(gc.exp(x))
    (g,) = gc.gradients(y, x)
    f = gc.function([y, g], [x])
    out = f(np.log([1.0, 2.0, 3.0]))
    assert_close(out[0], 6.0)
    assert_close(out[1], [1.0, 2.0, 3.0])
    assert uids_used(lambda: [f(np.full(3, k)) for k in range(4)]) == 0


def test_slot_reuse_keeps_every_fetched_value():
    x = gc.variable(1.0)
    chain = [x]
    for _ in range(20):
        chain.append(chain[-1] * 2.0)
    fetched = gc.evaluate(chain[::5])
    assert fetched == [2.0 ** k for k in range(0, 21, 5)]


# ----- seeded random draws -----
def test_random_ops_are_drawn_once_and_replayed():
    gc.set_seed(7)
    u = gc.uniform((1000,), low=-1.0, high=3.0)
    n = gc.normal((1000,), mean=2.0, std=0.5)
    b = gc.bernoulli((1000,), p=0.25)
    assert u.numpy().min() >= -1.0 and u.numpy().max() < 3.0
    assert abs(u.numpy().mean() - 1.0) < 0.15
    assert abs(n.numpy().mean() - 2.0) < 0.1 and abs(n.numpy().std() - 0.5) < 0.05
    assert set(np.unique(b.numpy())) <= {0.0, 1.0} and abs(b.numpy().mean() - 0.25) < 0.05
    assert_close(gc.evaluate(u), u.numpy())  # replay gives the same numbers
    gc.set_seed(7)
    assert_close(gc.uniform((1000,), low=-1.0, high=3.0).numpy(), u.numpy())
    assert not np.allclose(gc.uniform((1000,), low=-1.0, high=3.0).numpy(), u.numpy())
    assert_close(gc.uniform(3, seed=5).numpy(), gc.uniform(3, seed=5).numpy())
    assert gc.uniform(2, dtype=np.float32).dtype == np.float32


def test_random_ops_pass_no_gradient_but_scale_one():
    gc.set_seed(0)
    x = gc.variable([1.0, 2.0, 3.0])
    r = gc.uniform((3,))
    gx, gr = gc.gradients(gc.sum(x * r), [x, r])
    assert_close(gx.numpy(), r.numpy())
    assert_close(gr.numpy(), x.numpy())  # r itself is a differentiable leaf
    assert gc.gradients(gc.sum(r), x) == [None]


def test_dtype_returns_a_numpy_dtype():
    x = gc.constant([1.0], dtype="float32")
    assert gc.dtype(x) == np.float32
    assert gc.cast(gc.constant([1, 2]), gc.dtype(x)).dtype == np.float32
    assert gc.dtype(3) == np.float64


def test_public_names_are_exported():
    for name in ["constant", "variable", "gradients", "true_gradients", "numeric_gradients",
                 "directional_projection", "register_gradient", "gradient_override_map",
                 "custom_gradient", "stop_gradient", "identity", "grad_pass_through",
                 "reverse_gradient", "clip_by_value", "clip_by_norm", "global_norm",
                 "clip_by_global_norm", "evaluate", "OverrideUnusedWarning"]:
        assert name in gc.__all__, name
    for name in ["GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer"]:
        assert isinstance(getattr(gc.train, name), type)
    assert list(itertools.islice(gc.registered_names(), 1))  # something is registered
    assert {"identity", "hardtanh", "reverse", "zero"} <= set(gc.registered_names())


def test_a_boolean_index_item_is_refused_as_on_every_backend():
    x = gc.constant([1.0, 2.0, 3.0])
    with pytest.raises(GraphError, match="indexing with a boolean is not supported; index with "
                                         "numbers"):
        x[True]
    np.testing.assert_array_equal(x[[2, 0]].numpy(), np.array([3.0, 1.0]))
