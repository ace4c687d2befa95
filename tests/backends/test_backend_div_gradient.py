"""The gradient of x / y is TensorFlow 2.21's RealDiv gradient on every backend, to the bit,
where |y| is tiny (audit11 J1: jax's own rule -g * x * y**-2 gave -inf for float32 y ~ 1e-20,
NaN for x = 0 and float64 y = 1e-170, and NaN for clip_by_norm's d/dclip_norm at a tiny
clip_norm, where TF gives finite numbers).

TF's rule: dx = g / y, dy = g * ((-x / y) / y), itself differentiated by the same rule (a
second derivative, grad() in a spec). Oracle: TensorFlow's GradientTape, called here.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set


def lit(values) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def same(got, expected, label):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (label, got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected, err_msg=label)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected), err_msg=label)  # -0


CASES = {  # name: (x, y, upstream w, dtype)
    "float32": ([1e-20, 2e-20, 3.0], [1e-20, 4e-20, 1e-30], 1.0, "float32"),
    "float64": ([0.0, 1e-200, 3.0], [1e-170, 1e-170, 1e-170], 1.0, "float64"),
    "scalar_y": ([1e-300, 2.0], [1e-170], 1.0, "float64"),
}
# A tiny upstream gradient: d(dz/dx)/dy = -w / y**2 is finite only in TF's order. The numpy
# core's rule is -(g * z) / y (z = x / y, gradcli/core/grad_rules.py), whose g * z underflows
# to -0 here: the frameworks' own rules only (see the session's report).
UPSTREAM = ([1e-300, 2.0], [1e-170, 3.0], 1e-300, "float64")
SPEC = """
dtype: {dtype}
inputs:
  x: {x}
  y: {y}
  w: {{value: {w!r}, trainable: false}}
let:
  gx: grad(sum(w * (x / y)), x)
  gy: grad(sum(w * (x / y)), y)
outputs:
  z: sum(w * (x / y))
  hx: sum(gx)
  hy: sum(gy)
"""


def tensorflows(x, y, w, dtype):
    x, y = tf.constant(x, dtype), tf.constant(y if len(y) > 1 else y[0], dtype)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with tf.GradientTape(persistent=True) as inner:
            inner.watch([x, y])
            z = tf.reduce_sum(tf.constant(w, dtype) * (x / y))
        gx, gy = inner.gradient(z, [x, y])
        hx, hy = tf.reduce_sum(gx), tf.reduce_sum(gy)
    grads = {"z": inner.gradient(z, [x, y]), "hx": outer.gradient(hx, [x, y]),
             "hy": outer.gradient(hy, [x, y])}
    return gx.numpy(), gy.numpy(), {o: [None if g is None else g.numpy() for g in gs]
                                    for o, gs in grads.items()}


@pytest.mark.parametrize("case", CASES)
def test_the_gradient_of_a_division_is_tensorflows_realdiv_gradient(backend, case):
    check_division(backend, *CASES[case])
    if case == "float32":  # what the finding was about: jax gave -inf, TF gives -1e20
        assert tensorflows(*CASES[case])[1][0] == np.float32(-1e20)


def test_a_tiny_upstream_gradient_of_a_division(framework):
    check_division(framework, *UPSTREAM)


def check_division(backend, x, y, w, dtype):
    gx, gy, grads = tensorflows(x, y, w, dtype)
    text = SPEC.format(dtype=dtype, x=lit(x), y=lit(y) if len(y) > 1 else repr(y[0]), w=w)
    result = runner.run(load(text, dtype=dtype), backend=backend)
    same(result.values["gx"], gx, "gx")
    same(result.values["gy"], gy, "gy")
    for output, (dx, dy) in grads.items():
        same(result.gradients[output]["y"].overridden, dy, f"d{output}/dy")
        if dx is not None:  # hx = sum(w / y) does not reach x: TF's None
            same(result.gradients[output]["x"].overridden, dx, f"d{output}/dx")


def test_integer_division_is_a_float64_division(backend):
    expected = tf.math.truediv(tf.constant([7, -7, 1], tf.int32), tf.constant([2, 2, 3], tf.int32))
    text = ("inputs:\n  x: [1.0, 2.0]\n  i: {value: [7, -7, 1], dtype: int32}\n"
            "  j: {value: [2, 2, 3], dtype: int32}\nlet:\n  q: i / j\n"
            "outputs:\n  y: sum(x) * sum(q)\n")
    result = runner.run(load(text), backend=backend)
    same(result.values["q"], expected.numpy(), "q")
    same(result.gradients["y"]["x"].overridden, np.full(2, np.sum(expected.numpy())), "dy/dx")


def test_clip_by_norm_at_a_tiny_clip_norm(backend):
    # d/dclip_norm was NaN on jax (0 * inf in its division rule); TF: -6579631074.385...
    t, c, w = tf.constant([1e-200, 1e-200], tf.float64), tf.constant(1e-210, tf.float64), [0.7, -1.3]
    with tf.GradientTape() as tape:
        tape.watch([t, c])
        y = tf.reduce_sum(tf.clip_by_norm(t, c) * tf.constant(w, tf.float64))
    dt, dc = tape.gradient(y, [t, c])
    text = ("inputs:\n  t: [1.0e-200, 1.0e-200]\n  c: 1.0e-210\n"
            f"  w: {{value: {lit(w)}, trainable: false}}\noutputs:\n  y: sum(clip_by_norm(t, c) * w)\n")
    result = runner.run(load(text), backend=backend)
    assert np.isfinite(dc.numpy())
    np.testing.assert_allclose(result.gradients["y"]["c"].overridden, dc.numpy(), rtol=1e-14)
    np.testing.assert_allclose(result.gradients["y"]["t"].overridden, dt.numpy(), rtol=1e-14)
