"""Long graphs: the backward walk is iterative and linear; values stay refreshed in linear work."""
from __future__ import annotations

import gc as pygc
import time

import numpy as np
from core_helpers import assert_close, uids_used

import gradcli as gc


def _chain(steps: int):
    """y = y * 0.999 + 0.001, steps times: 2 * steps chained ops (the constants are shared)."""
    x = gc.variable(np.linspace(-1.0, 1.0, 16))
    decay, bias = gc.constant(0.999), gc.constant(0.001)
    y = x
    for _ in range(steps):
        y = y * decay + bias
    return x, y


def test_a_100k_op_chain_differentiates_without_recursion_error():
    n = 50_000  # 100,000 chained ops: a mul and an add per step
    x, y = _chain(n)
    (g,) = gc.gradients(gc.sum(y), x)
    value, grad = gc.evaluate([y, g])
    assert_close(grad, np.full(16, 0.999 ** n), rtol=1e-9)
    assert_close(value, 0.999 ** n * np.linspace(-1.0, 1.0, 16) + (1 - 0.999 ** n), rtol=1e-9)
    # replays after an assign see the new value, through the same 100k-op graph
    x.assign(np.full(16, 2.0))
    assert_close(y.numpy(), 0.999 ** n * 2.0 + (1 - 0.999 ** n), rtol=1e-9)


def _timed_backward(steps: int) -> tuple[float, int]:
    """Best CPU time of two backward passes (built and evaluated) and the ops one creates."""
    x, y = _chain(steps)
    loss = gc.sum(y)
    times, created = [], 0
    for _ in range(2):
        pygc.collect()
        pygc.disable()  # a full collection in one run would time the whole heap, not the walk
        try:
            start = time.process_time()
            created = uids_used(lambda: gc.evaluate(gc.gradients(loss, x)))
            times.append(time.process_time() - start)
        finally:
            pygc.enable()
    return min(times), created


def test_backward_work_is_linear_in_the_chain_length():
    _timed_backward(1_000)  # warm up caches and allocators
    small_time, small_ops = _timed_backward(5_000)
    large_time, large_ops = _timed_backward(20_000)
    # 4x the ops: exactly 4x the gradient nodes (up to a constant) and about 4x the time;
    # a quadratic walk would take 16x
    assert abs(large_ops - 4 * small_ops) <= 3 * 16
    assert large_time / small_time < 8.0, (small_time, large_time)


def test_building_after_an_assign_recomputes_each_op_once():
    x = gc.variable(np.linspace(-1.0, 1.0, 4))
    y = x
    for _ in range(300):
        y = gc.tanh(y * 0.9 + 0.1)
    loss = gc.sum(y)
    calls = {}
    ops = [op for op in gc.core.graph.walk_ops([loss]) if op.inputs]

    def counting(op):
        kernel = op.kernel

        def run(*values):
            calls[op.uid] = calls.get(op.uid, 0) + 1
            return kernel(*values)
        return run

    for op in ops:
        op.kernel = counting(op)
    x.assign(np.zeros(4))
    (g,) = gc.gradients(loss, x)  # builds ~2000 ops, whose rules read stale forward tensors
    # elementwise ops keep no value, so building their gradients runs no forward kernel
    assert max(calls.values(), default=1) == 1
    calls.clear()
    loss.numpy()
    assert max(calls.values()) == 1 and len(calls) == len(ops)  # each op once, not per step
    calls.clear()
    loss.numpy()
    assert calls == {}
    expected = np.zeros(4)
    d = np.ones(4)
    for _ in range(300):
        expected = np.tanh(expected * 0.9 + 0.1)
        d = d * 0.9 * (1 - expected ** 2)
    assert_close(loss.numpy(), expected.sum())
    assert_close(g.numpy(), d)
