"""A graph the user drops is freed at once, by reference counting, not later by the cyclic
garbage collector in the middle of whatever runs next (the next graph's build).

Each case builds a graph with the collector off, keeps only a weak reference to one of its
tensors, and checks the tensor is gone as soon as the builder returns.
"""
from __future__ import annotations

import copy
import gc as pygc
import weakref

import numpy as np
import pytest

import gradcli as gc


def _chain():
    x = gc.variable(np.float64(0.5))
    y = x
    for _ in range(50):
        y = gc.tanh(y * 1.0001 + 0.1)
    grads = gc.gradients(y, [x]) + gc.true_gradients(y, [x])
    return y, [y, *grads], [x]


def _custom():
    x = gc.variable(np.linspace(-1, 1, 5))

    @gc.custom_gradient
    def f(v):
        return gc.tanh(v), lambda dy: dy * 2.0

    y = gc.sum(f(x) * x)
    return y, gc.gradients(y, [x]), [x]


def _overridden_and_stopped():
    x = gc.variable(np.linspace(-1, 1, 5))
    with gc.gradient_override_map({"Sign": "Identity"}):
        s = gc.sign(x)
    y = gc.sum(gc.clip_by_norm(s * gc.stop_gradient(x), 1.0) + gc.grad_pass_through(gc.round)(x))
    return y, gc.gradients(y, [x]) + gc.true_gradients(y, [x]), [x]


def _second_order():
    x = gc.variable(np.float64(0.3))
    y = gc.sin(x) * x
    (g,) = gc.gradients(y, [x])
    return y, [g, *gc.gradients(g, [x])], [x]


@pytest.mark.parametrize("build", [_chain, _custom, _overridden_and_stopped, _second_order])
@pytest.mark.parametrize("run", ["evaluate", "function", "numeric"])
def test_a_dropped_graph_is_freed_without_the_cyclic_collector(build, run):
    def make():
        y, fetches, xs = build()
        if run == "evaluate":
            gc.evaluate(fetches)
        elif run == "function":
            gc.function(fetches, feeds=[])()
        else:
            gc.numeric_gradients(y, xs)
        return weakref.ref(y), weakref.ref(fetches[-1])

    pygc.collect()
    was_on = pygc.isenabled()
    pygc.disable()
    try:
        y, last = make()
        assert y() is None and last() is None
    finally:
        if was_on:
            pygc.enable()


def test_a_one_output_op_is_its_own_op_and_a_copy_is_its_own():
    x = gc.variable(np.float64(2.0))
    y = gc.tanh(x * 3.0)
    assert y.op is y and y.op.output is y and y.op.outputs == (y,)
    assert y.op.inputs[0].op.type == "mul"
    c = copy.copy(y)
    assert c.op is c and c.op.inputs[0] is y.op.inputs[0]


def test_the_outputs_of_a_several_output_op_share_it():
    x = gc.variable(np.array([[1.0, 3.0, 2.0]]))
    m, i = gc.max_with_argmax(x, axis=1)
    assert m.op is i.op and m.op.outputs == (m, i) and m.op.output is m
    assert m.op is not m and m.op.type == i.op.type
    np.testing.assert_array_equal(gc.evaluate([m, i])[1], np.argmax(np.array([[1.0, 3.0, 2.0]]), axis=1))
