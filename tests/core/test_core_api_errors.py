"""Python API mistakes get a sentence, and the signatures say what the functions return."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import GradcliError


def test_evaluating_what_minimize_returned_says_the_step_is_already_applied():
    w = gc.variable([1.0, -2.0])
    loss = gc.sum(w * w)
    opt = gc.train.GradientDescentOptimizer(0.25)
    with pytest.raises(GradcliError, match=r"minimize\(\) and apply_gradients\(\) apply their step"):
        gc.evaluate(opt.minimize(loss))  # the TF1 habit: sess.run(opt.minimize(loss))
    with pytest.raises(GradcliError, match="apply their step when called"):
        gc.evaluate([loss, opt.apply_gradients(opt.compute_gradients(loss))])
    np.testing.assert_allclose(w.numpy(), [0.25, -0.5])  # both steps were applied, once each


@pytest.mark.parametrize("fetch", [3, "loss", object()])
def test_evaluating_something_else_names_its_type(fetch):
    with pytest.raises(GradcliError, match=f"evaluate\\(\\) fetches tensors, got {type(fetch).__name__}"):
        gc.evaluate(fetch)


def test_function_is_annotated_as_returning_a_callable():
    returns = inspect.signature(gc.function).return_annotation
    assert returns not in (None, "None", inspect.Signature.empty)
    x = gc.constant(2.0)
    f = gc.function([x * x], [x])
    assert callable(f) and f(3.0) == [9.0]


@pytest.mark.parametrize("cls", [gc.gradient_override_map, gc.train.GradientDescentOptimizer,
                                 gc.train.MomentumOptimizer, gc.train.AdamOptimizer])
def test_classes_do_not_claim_to_return_none(cls):
    assert inspect.signature(cls).return_annotation in (inspect.Signature.empty, cls, cls.__name__)
