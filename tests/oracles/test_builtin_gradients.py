"""The built-in named gradients (identity, hardtanh, reverse, zero) against TensorFlow 2.21,
written out here as tf.custom_gradient rules: on the core's Python API and through a spec on
every backend, in float32 and float64, at their edges: |x| = 1 exactly and one float step
either side, +-0.0, +-inf and NaN in x, and -0.0, NaN and inf in the upstream gradient.

Compared bit for bit: the same dtype, the same values, the same sign of every zero.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from available import backend_params
from click.testing import CliRunner
from oracle_helpers import literal, run_spec, tensorflow

import gradcli as gc
from gradcli.cli import cli
from gradcli.ops import BUILTINS

tf = tensorflow()

# TensorFlow's own gradients for each built-in: the gradient of the op's first input.
TF = {
    "identity": lambda x, dy: dy,
    "hardtanh": lambda x, dy: tf.where(tf.abs(x) <= 1, dy, tf.zeros_like(dy)),
    "reverse": lambda x, dy: -dy,
    "zero": lambda x, dy: tf.zeros_like(x),
}
DTYPES = ("float32", "float64")


def edges(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, dy): x at the edges, each with an upstream gradient that shows what passes."""
    t = np.dtype(dtype)
    below, above = np.nextafter(t.type(1), t.type(0)), np.nextafter(t.type(1), t.type(2))
    x = np.array([-np.inf, -2.0, -above, -1.0, -below, -0.5, -0.0, 0.0, 0.5, below, 1.0, above,
                  3.0, np.inf, np.nan, 0.25, 1.0, -1.0, 5.0, np.nan], dtype=t)
    dy = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -0.0, 0.0, -0.0, -0.0,
                   np.nan, np.nan, np.nan, np.nan, np.inf, -np.inf, -0.0, 2.5], dtype=t)
    return x, dy


def tensorflow_gradient(name: str, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """d sum(sign(x) * dy) / dx with sign's gradient replaced by the built-in, in TensorFlow."""
    @tf.custom_gradient
    def overridden(v):
        return tf.sign(v), lambda upstream: TF[name](v, upstream)

    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_sum(overridden(xt) * tf.constant(dy))
    return tape.gradient(y, xt).numpy()


def same_bits(label: str, got, expected) -> list[str]:
    """[] when got is expected to the bit (NaN matching NaN, -0.0 only -0.0); else why not."""
    if got is None:
        return [f"{label}: no gradient (None), expected {expected}"]
    got = np.asarray(got)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return [f"{label}: {got.dtype}{list(got.shape)}, expected {expected.dtype}"
                f"{list(expected.shape)}"]
    nan = np.isnan(expected)
    if not (np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], expected[~nan])
            and np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))):
        return [f"{label}: {got.tolist()}, expected {expected.tolist()}"]
    return []


def test_the_oracle_sees_the_edges():
    """The TensorFlow rules above are the ones documented: hardtanh passes |x| = 1, stops one
    float step beyond and at NaN, keeps dy's -0.0 and NaN where it passes; reverse gives -0.0."""
    x, dy = edges("float32")
    hard = tensorflow_gradient("hardtanh", x, dy)
    assert hard[3] == 4.0 and hard[10] == 0.0 and np.signbit(hard[10])  # |x| = 1: dy, its -0.0
    assert hard[2] == 0.0 and hard[11] == 0.0 and not np.signbit(hard[11])  # just beyond: +0
    assert hard[4] == 5.0 and hard[14] == 0.0 and np.isnan(hard[15])  # NaN x: 0; NaN dy: NaN
    assert np.signbit(tensorflow_gradient("reverse", x, dy)[7])  # -(+0.0) is -0.0
    assert hard.dtype == np.float32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_the_core_python_api_matches_tensorflow(name, dtype):
    x, dy = edges(dtype)
    v = gc.constant(x)
    with gc.gradient_override_map({"Sign": name}):
        y = gc.sign(v)
    (g,) = gc.gradients(gc.sum(y * gc.constant(dy)), v)
    assert g is not None  # "zero" too: zeros, the input stays connected
    assert not same_bits(name, gc.evaluate(g), tensorflow_gradient(name, x, dy))


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_builtin_gives_the_first_input_only(dtype):
    """On a two-input op, as TensorFlow's rule returning (gradient, None)."""
    x, dy = edges(dtype)
    u, w = gc.constant(x), gc.constant(np.full_like(x, 3.0))
    with gc.gradient_override_map({"Mul": "hardtanh"}):
        y = gc.mul(u, w)
    gu, gw = gc.gradients(gc.sum(y * gc.constant(dy)), [u, w])
    assert gw is None
    assert not same_bits("hardtanh on mul", gc.evaluate(gu), tensorflow_gradient("hardtanh", x, dy))


def spec(dtype: str) -> str:
    x, dy = edges(dtype)
    names = sorted(BUILTINS)
    overrides = "\n".join(f"  - {{op: sign, gradient: {n}, scope: [y_{n}]}}" for n in names)
    outputs = "\n".join(f"  y_{n}: sign(x) * dy" for n in names)
    return (f"dtype: {dtype}\ninputs:\n  x: {literal(x.astype(np.float64))}\n"
            f"  dy: {{value: {literal(dy.astype(np.float64))}, trainable: false}}\n"
            f"override_map:\n{overrides}\noutputs:\n{outputs}\nwrt: [x]\nunconnected: none\n")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", backend_params())
def test_every_backend_matches_tensorflow(backend, dtype):
    result = run_spec(spec(dtype), backend)
    x, dy = edges(dtype)
    failures = []
    for name in sorted(BUILTINS):
        got = result.gradients[f"y_{name}"]["x"].overridden
        failures += same_bits(f"{backend} {dtype} {name}", got, tensorflow_gradient(name, x, dy))
    assert not failures, "\n".join(failures)


def test_the_docs_and_the_listing_show_the_texts_that_run():
    docs = (Path(__file__).parents[2] / "docs" / "ops.md").read_text()
    listed = CliRunner().invoke(cli, ["list", "gradients"], terminal_width=250).output
    for name, (text, _) in BUILTINS.items():
        assert f'"{name}": ("{text}",' in docs, name
        assert text in listed, name
