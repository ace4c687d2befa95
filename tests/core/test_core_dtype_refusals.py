"""The dtypes TensorFlow 2.21 has no kernel for are refused as the op is built, never by its
kernel on every replay (fix12a).

- softmax, log_softmax and logsumexp of an integer or boolean tensor, and max, min, prod (as
  sum and mean) of a boolean one, are refused by the Python API as the op is built, in the
  op table's words, before the kernel runs;
- a replay of a built graph runs the kernels alone: no dtype check per call (the checks sat
  in the numpy kernels, paid every training step and every replay).

The messages are written out here as the user reads them (tests/backends pins them for a
spec on every backend); TensorFlow's own refusal: tests/backends/test_backend_float_only_ops.py
and test_backend_integer_reductions.py.
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import GraphError

OPS_DIR = str(Path(gc.__file__).parent / "ops")
BUILDING = str(Path(gc.__file__).parent / "core" / "building.py")
VALUES = {"bool": [[True, False, True], [False, False, True]], "int32": [[3, -1, 3], [0, 7, -2]],
          "int64": [[3, -1, 3], [0, 7, -2]]}
TF_NAMES = {"softmax": "nn.softmax", "log_softmax": "nn.log_softmax",
            "logsumexp": "reduce_logsumexp"}
REFUSED = [(op, dtype) for op in TF_NAMES for dtype in ("int32", "int64", "bool")] + [
    (op, "bool") for op in ("max", "min", "prod", "sum", "mean")]


def expected(op: str, dtype: str, shape: str) -> str:
    head = f"op '{op}' cannot run on inputs of shape {shape} {dtype}: "
    if op in TF_NAMES:
        article = "a" if dtype == "bool" else "an"
        return (head + f"{op} of {article} {dtype} tensor is not defined, as TensorFlow's "
                f"{TF_NAMES[op]} has floats only; cast it first: {op}(cast(k, dtype(x))), x a "
                "float tensor")
    return (head + f"{op} of a boolean tensor is not defined, as TensorFlow's reduce_{op} has "
            f"no boolean kernel; cast it first: {op}(cast(x > 0, dtype(x)))")


def calls_into(paths, run) -> collections.Counter:
    """How many times each Python function of the files under paths was called by run()."""
    called: collections.Counter = collections.Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(paths):
            called[frame.f_code.co_name] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return called


@pytest.mark.parametrize("op, dtype", REFUSED)
@pytest.mark.parametrize("form", ["tensor", "empty", "0-d", "axis"])
def test_the_api_refuses_the_dtype_as_it_builds_the_op(op, dtype, form):
    value = np.array(VALUES[dtype], dtype=dtype)
    value = value[:0] if form == "empty" else value[0, 0] if form == "0-d" else value
    x = gc.constant(value, dtype=dtype)
    axis = {"axis": 0} if form == "axis" else {}
    with pytest.raises(GraphError) as caught:
        getattr(gc, op)(x, **axis)
    assert str(caught.value) == expected(op, dtype, str(value.shape))


@pytest.mark.parametrize("op", ["max", "min", "prod"])
def test_an_integer_max_min_or_prod_is_built_and_keeps_its_dtype(op):
    k = np.array(VALUES["int32"], dtype="int32")
    got = gc.evaluate(getattr(gc, op)(gc.constant(k, dtype="int32"), axis=1))
    expected_value = {"max": k.max(axis=1), "min": k.min(axis=1), "prod": np.prod(k, axis=1)}[op]
    assert got.dtype == np.int32 and np.array_equal(got, expected_value)


@pytest.mark.parametrize("op, dtype", [("softmax", "int64"), ("logsumexp", "bool"),
                                       ("max", "bool"), ("prod", "bool")])
def test_a_refused_dtype_never_reaches_the_kernel(op, dtype):
    x = gc.constant(np.array(VALUES[dtype], dtype=dtype), dtype=dtype)

    def build():
        with pytest.raises(GraphError, match="is not defined, as TensorFlow's"):
            getattr(gc, op)(x)

    called = calls_into((OPS_DIR, BUILDING), build)
    assert called["refuse_dtype"] == 1 and called["make_op"] == 0, called
    kernels = {"softmax", "log_softmax", "logsumexp", "reduce_max", "reduce_min", "reduce_prod",
               "reduce_sum", "mean"}
    assert not kernels & set(called), called


def test_a_replay_runs_the_kernels_alone_the_dtypes_were_checked_at_build():
    v = np.linspace(-1.5, 2.0, 12).reshape(3, 4)
    x = gc.constant(np.zeros((3, 4)))
    built = {}

    def build():
        built["outs"] = [gc.softmax(x), gc.log_softmax(x, axis=0), gc.logsumexp(x, axis=1),
                         gc.max(x, axis=1), gc.min(x), gc.prod(x, axis=0)]

    at_build = calls_into((OPS_DIR, BUILDING), build)
    assert at_build["refuse_dtype"] == 6, at_build  # each op's input dtype, once, as it is built
    f = gc.function(built["outs"], [x])
    replays = 10
    called = calls_into((OPS_DIR, BUILDING), lambda: [f(v) for _ in range(replays)])
    # each kernel once a replay (softmax, log_softmax and logsumexp call reduce_max for their
    # shift), and nothing else: no dtype check, no refusal, nothing of the build
    assert called == {"softmax": replays, "log_softmax": replays, "logsumexp": replays,
                      "reduce_max": 4 * replays, "reduce_min": replays,
                      "reduce_prod": replays}, called
    softmax, log_softmax, logsumexp, top, bottom, prod = f(v)
    np.testing.assert_allclose(softmax, np.exp(v) / np.exp(v).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(log_softmax, v - np.log(np.exp(v).sum(axis=0, keepdims=True)))
    np.testing.assert_allclose(logsumexp, np.log(np.exp(v).sum(axis=1)))
    assert np.array_equal(top, v.max(axis=1)) and bottom == v.min()
    np.testing.assert_allclose(prod, np.prod(v, axis=0))
