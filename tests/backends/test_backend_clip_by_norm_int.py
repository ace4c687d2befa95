"""clip_by_norm with an integer clip_norm is tf.clip_by_norm's on every backend: TensorFlow
casts maximum(clip_norm, 0) to t's dtype (audit11 C1: the numpy backend failed in float32
with an internal message about a `maximum` gradient, the tensorflow backend with a raw
"Mul ... int32" error; torch and jax gave TF's numbers).

Oracle: tf.clip_by_norm and tf.GradientTape, called here.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

T, W = [[3.0, 4.0], [0.3, -0.4]], [[1.0, -2.0], [0.5, 3.0]]
CLIPS = {"c": (2, "int32"), "d": (1, "int64"), "n": (-3, "int32")}  # n: clamped to 0
AXES = {"c": None, "d": [1], "n": None}


def tensorflows(dtype):
    t, w = tf.constant(T, dtype), tf.constant(W, dtype)
    out = {}
    for name, (value, int_dtype) in CLIPS.items():
        with tf.GradientTape() as tape:
            tape.watch(t)
            v = tf.clip_by_norm(t, tf.constant(value, int_dtype), axes=AXES[name])
            y = tf.reduce_sum(v * w)
        out[name] = v.numpy(), y.numpy(), tape.gradient(y, t).numpy()
    with tf.GradientTape() as tape:  # a bare integer: TF's Python-number branch
        tape.watch(t)
        v = tf.clip_by_norm(t, 1)
        y = tf.reduce_sum(v * w)
    out["literal"] = v.numpy(), y.numpy(), tape.gradient(y, t).numpy()
    return out


def spec_text(dtype):
    clip = {"literal": "1", **{n: n for n in CLIPS}}
    axes = {**AXES, "literal": None}
    return (f"dtype: {dtype}\ninputs:\n  t: {T}\n  w: {{value: {W}, trainable: false}}\n"
            + "".join(f"  {n}: {{value: {v}, dtype: {d}}}\n" for n, (v, d) in CLIPS.items())
            + "let:\n" + "".join(
                f"  v_{n}: clip_by_norm(t, {c}{'' if axes[n] is None else f', axes={axes[n]}'})\n"
                for n, c in clip.items())
            + "outputs:\n" + "".join(f"  y_{n}: sum(v_{n} * w)\n" for n in clip))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_integer_clip_norm_is_cast_to_ts_dtype(backend, dtype):
    expected = tensorflows(dtype)
    result = runner.run(load(spec_text(dtype), "clipint", dtype=dtype), backend=backend)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == "float32" else dict(rtol=1e-14, atol=1e-15)
    for name, (v, y, dt) in expected.items():
        got_v, got_y = np.asarray(result.values[f"v_{name}"]), np.asarray(result.values[f"y_{name}"])
        got_dt = np.asarray(result.gradients[f"y_{name}"]["t"].overridden)
        for label, got, want in (("v", got_v, v), ("y", got_y, y), ("dy/dt", got_dt, dt)):
            assert got.dtype == want.dtype, (name, label, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, err_msg=f"{name} {label}", **tol)
    assert np.all(expected["n"][0] == 0)  # a negative clip_norm counts as 0, as in TF
