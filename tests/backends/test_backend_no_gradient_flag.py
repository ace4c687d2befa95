"""The op table's `no_gradient_in` (the frameworks whose own autodiff gives None through an op,
where the derivative is zeros) against the frameworks themselves: TensorFlow 2.21's
GradientTape and torch.autograd on every one- and two-input op as their backends run it. The
fact lived as a sentence beside the eager backends ("TensorFlow registers no gradient for
round, floor and ceil"); the notes' list (eager_program.NO_GRADIENT) is derived from the flag.
"""
import numpy as np
import pytest
import tensorflow as tf
import torch

from gradcli.backends.eager_program import NO_GRADIENT, zero_derivative_text
from gradcli.backends.tensorflow import TensorflowKit
from gradcli.backends.torch import TorchKit
from gradcli.ops import OPS

X = np.array([0.15, 0.35, 1.45, 2.65])  # inside every op's domain (log, sqrt, acosh...)
DIFFERENTIABLE = sorted(name for name, spec in OPS.items()
                        if spec.family in ("unary", "binary") and spec.result == "tensor"
                        and spec.native and any(spec.gradient))


def tf_gives_none(fn, n: int) -> bool:
    xs = [tf.Variable(X * (k + 1), dtype=tf.float64) for k in range(n)]
    try:
        with tf.GradientTape() as tape:
            y = fn(*xs)
        return any(g is None for g in tape.gradient(y, xs))
    except LookupError:  # an op with no gradient registered at all
        return True


def torch_gives_none(fn, n: int) -> bool:
    xs = [torch.tensor(X * (k + 1), dtype=torch.float64, requires_grad=True) for k in range(n)]
    y = fn(*xs)
    if not y.requires_grad:
        return True
    return any(g is None for g in torch.autograd.grad(y.sum(), xs, allow_unused=True))


@pytest.fixture(scope="module")
def kits():
    return {"tensorflow": (TensorflowKit().ops, tf_gives_none),
            "torch": (TorchKit().ops, torch_gives_none)}


def test_tensorflow_itself_gives_no_gradient_for_round_floor_and_ceil():
    for fn in (tf.math.round, tf.math.floor, tf.math.ceil):
        assert tf_gives_none(fn, 1)
    assert not tf_gives_none(tf.math.sign, 1)  # zeros: a step, but TF registers its gradient
    assert {n for n in OPS if "tensorflow" in OPS[n].no_gradient_in} >= {"round", "floor", "ceil"}


@pytest.mark.parametrize("on", ["tensorflow", "torch"])
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_the_flag_says_what_the_framework_does(kits, on, name):
    ops, gives_none = kits[on]
    spec = OPS[name]
    n = len(spec.tensor_params)
    got = gives_none(lambda *xs: ops[name](*xs, **spec.defaults), n)
    assert got == (on in spec.no_gradient_in), (
        f"{on} gives {'None' if got else 'a gradient'} through {name}; the table's "
        f"no_gradient_in is {spec.no_gradient_in}")


def test_the_eager_list_is_derived_and_the_note_names_what_gives_none():
    assert NO_GRADIENT["tensorflow"] == {n for n, s in OPS.items() if "tensorflow" in s.no_gradient_in}
    assert NO_GRADIENT["jax"] == frozenset()  # jax gives zeros, never None
    path = [("sign", False), ("round", False), ("mul", False)]
    assert zero_derivative_text(path, "tensorflow") == \
        "the path goes through round, with a zero derivative"  # sign has TF's zeros gradient
    assert zero_derivative_text([("sign", False)], "torch") == \
        "the path goes through sign, with a zero derivative"  # no cause known: the steps
