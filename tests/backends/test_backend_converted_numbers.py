"""A bare number beside a tensor (a binary operator's, where's branches, clip's bounds,
concat's or stack's list) is TensorFlow 2.21's on every backend (tryout12 items 2, 3).

TensorFlow converts the number to the dtype of the tensor beside it: an integer takes an
integer tensor's dtype (tf.where(c, k, 2) and tf.stack([k, 1]) are int64 for an int64 k;
gradcli made the 1 of stack([k, 1]) a float64 tensor and refused the mix), and a float is
refused there even when whole ("Cannot convert 2.0 to EagerTensor of dtype int64"; gradcli
gave int64). Where the expression shows the integer tensor the spec is refused as it loads
(check too), at the op's place; where only the built tensors show it (a function's
argument), every backend refuses in the same words. A number beside a float tensor takes its
dtype, as before.

Oracle: TensorFlow itself, called here.
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner
from gradcli.errors import SpecError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

INPUTS = ("inputs:\n  x: [1.5, 2.5, 3.5]\n  c: {value: [true, false, true], dtype: bool}\n"
          "  k: {value: [7, -5, 3], dtype: int64}\n  j: {value: [7, -5, 3], dtype: int32}\n"
          "  k0: {value: 5, dtype: int64}\n")
T = {"x": tf.constant([1.5, 2.5, 3.5], tf.float64), "c": tf.constant([True, False, True]),
     "k": tf.constant([7, -5, 3], tf.int64), "j": tf.constant([7, -5, 3], tf.int32),
     "k0": tf.constant(5, tf.int64)}

KEPT = {  # let name: (expression, TensorFlow's op)
    "w1": ("where(c, k, 2)", lambda t: tf.where(t["c"], t["k"], 2)),
    "w2": ("where(c, 2, k)", lambda t: tf.where(t["c"], 2, t["k"])),
    "w3": ("where(c, j, -2)", lambda t: tf.where(t["c"], t["j"], -2)),
    "w4": ("where(c, 2, x)", lambda t: tf.where(t["c"], 2, t["x"])),
    "w5": ("where(c, x, 2)", lambda t: tf.where(t["c"], t["x"], 2)),
    "w6": ("where(c, k, [1, 2, 3])", lambda t: tf.where(t["c"], t["k"], [1, 2, 3])),
    "s1": ("stack([k0, 1])", lambda t: tf.stack([t["k0"], 1])),
    "s2": ("stack([1, k0, -4])", lambda t: tf.stack([1, t["k0"], -4])),
    "s3": ("stack([k, [1, 2, 3]])", lambda t: tf.stack([t["k"], [1, 2, 3]])),
    "s4": ("concat([k, [1, 2]])", lambda t: tf.concat([t["k"], [1, 2]], 0)),
    "s5": ("stack([x, [1, 2, 3]])", lambda t: tf.stack([t["x"], [1, 2, 3]])),
    "c1": ("clip(k, 0, 4)", lambda t: tf.clip_by_value(t["k"], 0, 4)),
    "c2": ("clip(j, -1, 4)", lambda t: tf.clip_by_value(t["j"], -1, 4)),
}


def test_an_integer_beside_a_tensor_takes_its_dtype_as_in_tensorflow(backend):
    text = INPUTS + "let:\n" + "".join(f"  {n}: {e}\n" for n, (e, _) in KEPT.items()) \
        + "outputs:\n  y: sum(x)\n"
    result = runner.run(load(text), backend=backend)
    for name, (_, op) in KEPT.items():
        want = op(T).numpy()
        got = np.asarray(result.values[name])
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        assert np.array_equal(got, want), (name, got, want)


REFUSED = {  # expression: (the op, the number as written, the integer tensor, TensorFlow's op)
    "where(c, k, 2.0)": ("where", "2.0", "k", lambda t: tf.where(t["c"], t["k"], 2.0)),
    "where(c, 2.0, k)": ("where", "2.0", "k", lambda t: tf.where(t["c"], 2.0, t["k"])),
    "where(c, j, -3.0)": ("where", "-3.0", "j", lambda t: tf.where(t["c"], t["j"], -3.0)),
    "where(c, k, [1.0, 2.0, 3.0])": ("where", "[1.0, 2.0, 3.0]", "k",
                                     lambda t: tf.where(t["c"], t["k"], [1.0, 2.0, 3.0])),
    "stack([k0, 1.0])": ("stack", "1.0", "k0", lambda t: tf.stack([t["k0"], 1.0])),
    "concat([k, [1.0, 2]])": ("concat", "[1.0, 2]", "k",
                              lambda t: tf.concat([t["k"], [1.0, 2]], 0)),
    "clip(k, 0.0, 4)": ("clip", "0.0", "k", lambda t: tf.clip_by_value(t["k"], 0.0, 4)),
    "clip(k, 0, 4.0)": ("clip", "4.0", "k", lambda t: tf.clip_by_value(t["k"], 0, 4.0)),
    # every op whose operands share a dtype converts its numbers alike: gradcli made k + 2.0 an
    # int64 k + 2 (lead, session 12); TensorFlow refuses it (AddV2 or "Cannot convert")
    "k + 2.0": ("add", "2.0", "k", lambda t: t["k"] + 2.0),
    "2.0 * k": ("mul", "2.0", "k", lambda t: 2.0 * t["k"]),
    "j - 1.0": ("sub", "1.0", "j", lambda t: t["j"] - 1.0),
    "k / 2.0": ("div", "2.0", "k", lambda t: t["k"] / 2.0),
    "k ** 2.0": ("pow", "2.0", "k", lambda t: t["k"] ** 2.0),
    "maximum(k, 0.0)": ("maximum", "0.0", "k", lambda t: tf.maximum(t["k"], 0.0)),
    "k < 4.0": ("less", "4.0", "k", lambda t: t["k"] < 4.0),
}


@pytest.mark.parametrize("expression", REFUSED)
def test_a_float_beside_an_integer_tensor_is_refused_as_tensorflow_refuses_it(backend, expression):
    op, number, tensor, tf_op = REFUSED[expression]
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError),
                       match="Cannot convert .* to EagerTensor of dtype int|expected to be a "
                             "int(32|64) tensor but is a float tensor|must have the same dtype"):
        tf_op(T)
    dtype = "int32" if tensor == "j" else "int64"
    said = (f"{op}() of an {dtype} tensor and the float number {number} is not defined, as "
            f"TensorFlow converts no float number to {dtype}")
    # the expression shows the integer tensor: refused as the spec loads, at the op's place
    with pytest.raises(SpecError) as caught:
        load(INPUTS + f"let:\n  r: {expression}\noutputs:\n  y: sum(x)\n")
    message = str(caught.value)
    assert said in message, message
    assert f"cast the tensor first: cast({tensor}, dtype(x))" in message
    operator = re.search(r" (\*\*|[-+*/<]) ", expression)  # an operator's place is its own
    column = 6 + (operator.start(1) if operator else 0)
    assert f"spec.yaml:8:{column}: let.r" in message  # the op's place: its line and column
    # only the run sees it (a function's argument): every backend, in the same words
    call = re.sub(rf"\b{tensor}\b", "v", expression)
    text = INPUTS + (f"functions:\n  f:\n    args: [c, v]\n    forward: {call}\n"
                     f"    gradient: [none, none]\nlet:\n  r: f(c, {tensor})\n"
                     "outputs:\n  y: sum(x)\n")
    with pytest.raises(SpecError) as caught:
        runner.run(load(text), backend=backend)
    assert said.replace(number, repr(eval(number))) in str(caught.value), str(caught.value)


def test_two_tensors_of_two_dtypes_in_a_list_are_refused_as_before():
    # the run-time wording of the mix, kept (ops.table.mixed_dtypes); TensorFlow refuses too
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.stack([T["k"], T["x"]])
    with pytest.raises(SpecError) as caught:
        load(INPUTS + "let:\n  r: stack([k, x])\noutputs:\n  y: sum(x)\n")
    assert ("stack() of an int64 tensor and a float64 tensor is not defined, as TensorFlow "
            "promotes neither dtype to the other") in str(caught.value)
