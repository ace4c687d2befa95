"""gc.function's results are the caller's: changing one in place changes no constant, no
variable and no later call's result (the replay folds constants and passes inputs through
identity-like ops, so a result can be the very array a graph keeps)."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc


def calls_after_mutation(f, times=5):
    """Each call's first result, after the previous one was overwritten in place (enough
    calls for the replay to be generated as source)."""
    seen = []
    for _ in range(times):
        result = f()[0]
        seen.append(result.copy())
        result[...] = -999.0
    return seen


@pytest.mark.parametrize("wrap", [gc.stop_gradient, gc.reverse_gradient, gc.identity])
def test_a_folded_constant_passed_through_is_not_shared(wrap):
    c = gc.constant(np.array([1.0, 2.0]))
    f = gc.function([wrap(c * 2.0)])
    for value in calls_after_mutation(f):
        np.testing.assert_array_equal(value, [2.0, 4.0])


def test_a_gradient_that_is_a_constant_leaves_the_constant_alone():
    w = gc.variable(np.array([1.0, 3.0]))
    c = gc.constant(np.array([5.0, 7.0]))
    (g,) = gc.gradients(gc.sum(w * c), [w])  # d/dw sum(w * c) is c itself
    for value in calls_after_mutation(gc.function([g])):
        np.testing.assert_array_equal(value, [5.0, 7.0])
    np.testing.assert_array_equal(gc.evaluate(c), [5.0, 7.0])


def test_a_fetched_variable_or_its_view_is_a_copy():
    w = gc.variable(np.array([[1.0, 3.0], [2.0, 4.0]]))
    for fetch in (w, gc.transpose(w), gc.reshape(w, [4])):
        calls_after_mutation(gc.function([fetch]))
        np.testing.assert_array_equal(gc.evaluate(w), [[1.0, 3.0], [2.0, 4.0]])

