"""The first evaluation of a fetch set runs each needed kernel once, directly, without a
replay schedule; the second compiles one and later ones replay it (numpy written here is
the oracle)."""
from __future__ import annotations

import numpy as np

import gradcli as gc
from gradcli.core.evaluate import _CACHE
from gradcli.core.graph import walk_ops

RNG = np.random.default_rng(14)
X0 = RNG.normal(size=(3, 4))
W0 = RNG.normal(size=(4, 2))


def _mlp():
    x, w = gc.variable(X0), gc.variable(W0)
    h = gc.matmul(x, w)
    y = gc.tanh(h * 2.0 + 1.0)
    loss = gc.sum(y * y)
    gx, gw = gc.gradients(loss, [x, w])
    return x, w, loss, gx, gw


def _numpy_mlp(x, w):
    y = np.tanh((x @ w) * 2.0 + 1.0)
    dh = 2.0 * y * (1.0 - y * y) * 2.0
    return np.sum(y * y), dh @ w.T, x.T @ dh


def _count_kernels(fetches):
    """Wrap every non-leaf op's kernel in a counter: {op uid: calls}."""
    calls = {}
    for op in walk_ops(fetches):
        if op.inputs:
            calls[op.uid] = 0

            def counted(*args, _kernel=op.kernel, _uid=op.uid):
                calls[_uid] += 1
                return _kernel(*args)
            op.kernel = counted
    return calls


def _key(fetches, fed=()):
    return (tuple(t.uid for t in fetches), tuple(t.uid for t in fed))


def test_one_shot_values_are_numpys_and_the_replays_bits():
    x, w, loss, gx, gw = _mlp()
    fetches = [loss, gx, gw]
    once = gc.evaluate(fetches)
    assert _key(fetches) not in _CACHE  # evaluated once: nothing compiled
    for got, want in zip(once, _numpy_mlp(X0, W0)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    again = gc.evaluate(fetches)  # the second evaluation compiles and replays
    assert _key(fetches) in _CACHE
    for a, b in zip(once, again):
        assert np.array_equal(a, b)  # the same kernels in the same order: bit for bit
    w.assign(W0 * -0.5)
    for got, want in zip(gc.evaluate(fetches), _numpy_mlp(X0, W0 * -0.5)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_each_kernel_runs_once_and_build_values_are_not_recomputed():
    x = gc.variable(X0)
    w = gc.variable(W0)
    h = gc.matmul(x, w)  # computed at build
    a = gc.tanh(h * 1.5)  # lazy, read by three ops below
    y = gc.sum(a * a + a)
    calls = _count_kernels([y])
    matmul = h.op.uid
    value = gc.evaluate(y)
    a0 = np.tanh((X0 @ W0) * 1.5)
    np.testing.assert_allclose(value, np.sum(a0 * a0 + a0), rtol=1e-12)
    assert h._value is not None and calls[matmul] == 0  # its build-time value is read
    assert set(calls.values()) <= {0, 1}
    assert calls[a.op.uid] == 1 and calls[y.op.uid] <= 1
    before = dict(calls)
    gc.evaluate(y)  # compiles: the replay runs every kernel once more
    gc.evaluate(y)  # replays the cached schedule
    schedule = _CACHE[_key([y])]
    gc.evaluate(y)
    assert _CACHE[_key([y])] is schedule
    assert calls[a.op.uid] == before[a.op.uid] + 3


def test_one_shot_after_assign_recomputes_stale_build_values():
    x, w, loss, gx, gw = _mlp()
    w.assign(W0 + 1.0)  # the matmul's build-time value is stale now
    got = gc.evaluate([gw, loss])
    want = _numpy_mlp(X0, W0 + 1.0)
    np.testing.assert_allclose(got[0], want[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want[0], rtol=1e-12)


def test_one_shot_with_feeds_replaces_values_and_skips_what_the_feed_hides():
    x, w = gc.variable(X0), gc.variable(W0)
    h = gc.matmul(x, w)
    u = gc.exp(h * 0.5)  # fed below: its producers are not needed
    y = gc.tanh(u + gc.matmul(x, w * 2.0))
    calls = _count_kernels([y])
    fed_u = np.full((3, 2), 0.25)
    x1 = X0 * 3.0
    got = gc.evaluate(y, feed={u: fed_u, x: x1})
    np.testing.assert_allclose(got, np.tanh(fed_u + x1 @ (W0 * 2.0)), rtol=1e-12)
    assert calls[u.op.uid] == 0 and calls[h.op.uid] == 0
    assert calls[y.op.uid] == 1
    # no feed: the graph's own values, the fed run left nothing behind
    np.testing.assert_allclose(gc.evaluate(y), np.tanh(np.exp((X0 @ W0) * 0.5) + X0 @ (W0 * 2.0)),
                               rtol=1e-12)


def test_multi_output_op_runs_for_one_output_and_the_fed_one_keeps_its_value():
    x = gc.variable(np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]]))
    m, i = gc.core.max_with_argmax(x * 2.0, axis=1)
    calls = _count_kernels([m, i])
    x1 = np.array([[0.0, 5.0, 1.0], [9.0, -1.0, 4.0]])
    got_m, got_i = gc.evaluate([m, i], feed={m: np.array([7.0, 8.0]), x: x1})
    np.testing.assert_array_equal(got_m, [7.0, 8.0])
    np.testing.assert_array_equal(got_i, np.argmax(x1 * 2.0, axis=1))
    assert calls[m.op.uid] == 1
    got_m, got_i = gc.evaluate([m, i])  # nothing fed: the graph's own values
    np.testing.assert_array_equal(got_m, [6.0, 8.0])
    np.testing.assert_array_equal(got_i, [0, 2])


def test_a_deep_chain_needs_no_recursion_and_holds_only_live_values():
    x = gc.variable(np.array([0.3, -0.2]))
    y = x
    for _ in range(20_000):
        y = gc.tanh(y * 0.999 + 0.001)
    want = np.array([0.3, -0.2])
    for _ in range(20_000):
        want = np.tanh(want * 0.999 + 0.001)
    assert np.array_equal(gc.evaluate(y), gc.evaluate(y))  # one-shot, then the replay
    np.testing.assert_allclose(gc.evaluate(y), want, rtol=1e-12)


def test_function_compiles_at_once():
    x, w, loss, gx, gw = _mlp()
    f = gc.function([loss, gw], [w])
    assert _key([loss, gw], [w]) in _CACHE
    got = f(W0 * 0.25)
    want = _numpy_mlp(X0, W0 * 0.25)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[2], rtol=1e-12, atol=1e-12)
