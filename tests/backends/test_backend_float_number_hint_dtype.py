"""The run-time hint of the float-number refusal casts to the spec's float dtype (review12
item 3).

A float number beside an integer tensor that only the run sees (a function's argument) is
refused on every backend; its hint said `cast(<the int64 one>, float64)` even in a
`dtype: float32` spec, where following it gave the next error (float32 and float64 mixed).
It now says `cast(<the int64 one>, dtype(x)), x a float tensor`, and following it runs, with
TensorFlow's value.

Oracle: TensorFlow itself, called here.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from available import backend_params

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

INPUTS = "dtype: {dtype}\ninputs:\n  x: [0.5, 1.5, -2.0]\n  k: {{value: [1, -2, 7], dtype: int64}}\n"
REFUSED = ("functions:\n  f:\n    args: [v]\n    forward: v * 2.5\n    gradient: [none]\n"
           "let:\n  r: f(k)\noutputs:\n  y: sum(x)\n")
FOLLOWED = ("functions:\n  f:\n    args: [v, w]\n    forward: cast(v, dtype(w)) * 2.5\n"
            "    gradient: [none, none]\nlet:\n  r: f(k, x)\noutputs:\n  y: sum(x)\n")


@pytest.mark.parametrize("on", backend_params(("numpy", "tensorflow")))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_hint_casts_to_the_specs_float_dtype_and_following_it_runs(on, dtype):
    with pytest.raises(SpecError) as caught:
        runner.run(load_spec_text(INPUTS.format(dtype=dtype) + REFUSED, path="spec.yaml"),
                   backend=on, numeric=False)
    message = str(caught.value)
    assert "mul() of an int64 tensor and the float number 2.5 is not defined" in message, message
    assert "cast(<the int64 one>, dtype(x)), x a float tensor" in message, message
    assert "float64" not in message, message  # the old hint's, wrong in a float32 spec
    result = runner.run(load_spec_text(INPUTS.format(dtype=dtype) + FOLLOWED, path="spec.yaml"),
                        backend=on, numeric=False)
    want = tf.cast(tf.constant([1, -2, 7], tf.int64), dtype) * 2.5
    got = np.asarray(result.values["r"])
    assert got.dtype == want.numpy().dtype and np.array_equal(got, want.numpy())
