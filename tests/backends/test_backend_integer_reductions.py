"""sum, mean and prod of integer and boolean tensors are TensorFlow 2.21's on every backend (tryout10
F2, audit10 B: mean of int64 [-7, 5, 3, 4, -1] was 0.8 on numpy and jax, 0 on tensorflow, an
error on torch; mean(x > 0) ran on numpy and jax only).

- an integer sum keeps its dtype and wraps (tf.reduce_sum; numpy, torch and jax widen int32);
- an integer prod keeps its dtype and wraps too (tf.reduce_prod; audit11 I1);
- an integer mean is tf.reduce_mean's: an integer of the input's dtype, truncated toward zero;
- a boolean has neither: refused as the spec loads where the expression shows the boolean,
  else by every backend in the same words, at the expression's place.

Oracle: TensorFlow itself, called here on the same arrays.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from backend_helpers import load
from click.testing import CliRunner

from gradcli import runner
from gradcli.cli import cli
from gradcli.errors import SpecError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

I32_MAX, I32_MIN = 2**31 - 1, -2**31
I64_MAX, I64_MIN = 2**63 - 1, -2**63
INPUTS = {  # name: (values, dtype)
    "k": ([-7, 5, 3, 4, -1], "int64"),
    "h": ([-7, 0], "int64"),                        # -3.5: truncated to -3, not floored to -4
    "m": ([[1, 2], [2, 5]], "int64"),
    "n": ([[-1, -2], [-2, -5], [-4, -4]], "int32"),
    "big32": ([1, 2, I32_MAX], "int32"),            # TF sums an int32 mean in int64
    "low32": ([I32_MIN, -1], "int32"),
    "big64": ([I64_MAX, I64_MAX, 5], "int64"),      # an int64 sum wraps, and so its mean
    "low64": ([I64_MIN, -1], "int64"),
    "empty": ([[], []], "int32"),
    "one": (-3, "int64"),
    "p32": ([65536, 65536, 3], "int32"),            # 3 * 2**32: its prod wraps to 0 in int32
    "pn": ([[-7, 65536], [40000, 60000], [3, -1]], "int32"),
    "p64": ([2**62, 3, -5], "int64"),
}
CASES = {  # let name: (expression, TensorFlow's op on the input's tensor)
    "s_k": ("sum(k)", lambda t: tf.reduce_sum(t["k"])),
    "s_big32": ("sum(big32)", lambda t: tf.reduce_sum(t["big32"])),
    "s_big64": ("sum(big64)", lambda t: tf.reduce_sum(t["big64"])),
    "s_n0": ("sum(n, axis=0)", lambda t: tf.reduce_sum(t["n"], axis=0)),
    "s_empty": ("sum(empty, axis=1)", lambda t: tf.reduce_sum(t["empty"], axis=1)),
    "m_k": ("mean(k)", lambda t: tf.reduce_mean(t["k"])),
    "m_h": ("mean(h)", lambda t: tf.reduce_mean(t["h"])),
    "m_m0": ("mean(m, axis=0)", lambda t: tf.reduce_mean(t["m"], axis=0)),
    "m_n1": ("mean(n, axis=1, keepdims=True)",
             lambda t: tf.reduce_mean(t["n"], axis=1, keepdims=True)),
    "m_n": ("mean(n, axis=[0, 1])", lambda t: tf.reduce_mean(t["n"], axis=[0, 1])),
    "m_big32": ("mean(big32)", lambda t: tf.reduce_mean(t["big32"])),
    "m_low32": ("mean(low32)", lambda t: tf.reduce_mean(t["low32"])),
    "m_big64": ("mean(big64)", lambda t: tf.reduce_mean(t["big64"])),
    "m_low64": ("mean(low64)", lambda t: tf.reduce_mean(t["low64"])),
    "m_empty": ("mean(empty, axis=1)", lambda t: tf.reduce_mean(t["empty"], axis=1)),
    "m_none": ("mean(k, axis=[])", lambda t: tf.reduce_mean(t["k"], axis=[])),
    "m_one": ("mean(one)", lambda t: tf.reduce_mean(t["one"])),
    # prod keeps its dtype and wraps, as sum (audit11 I1: the int64 12884901888 on numpy, torch
    # and jax, where TensorFlow gives the int32 0)
    "p_32": ("prod(p32)", lambda t: tf.reduce_prod(t["p32"])),
    "p_n0": ("prod(pn, axis=0)", lambda t: tf.reduce_prod(t["pn"], axis=0)),
    "p_n1": ("prod(pn, axis=1, keepdims=True)", lambda t: tf.reduce_prod(t["pn"], axis=1, keepdims=True)),
    "p_n": ("prod(pn, axis=[0, 1])", lambda t: tf.reduce_prod(t["pn"], axis=[0, 1])),
    "p_64": ("prod(p64)", lambda t: tf.reduce_prod(t["p64"])),
    "p_empty": ("prod(empty, axis=1)", lambda t: tf.reduce_prod(t["empty"], axis=1)),
    "p_slice": ("prod(p32[0:0])", lambda t: tf.reduce_prod(t["p32"][0:0])),
    "p_none": ("prod(p32, axis=[])", lambda t: tf.reduce_prod(t["p32"], axis=[])),
    "p_one": ("prod(one)", lambda t: tf.reduce_prod(t["one"])),
}
SPEC = ("inputs:\n  x: [1.0, 2.0]\n"
        + "".join(f"  {n}: {{value: {v}, dtype: {d}}}\n" for n, (v, d) in INPUTS.items())
        + "let:\n" + "".join(f"  {n}: {e}\n" for n, (e, _) in CASES.items())
        + "outputs:\n  y: sum(x * cast(mean(k), dtype(x)))\n  z: sum(x * cast(prod(p32), dtype(x)))\n")


@pytest.fixture(scope="module")
def tensorflows():
    tensors = {n: tf.constant(np.array(v, dtype=d)) for n, (v, d) in INPUTS.items()}
    return {n: op(tensors).numpy() for n, (_, op) in CASES.items()}


def test_integer_sum_and_mean_are_tensorflows(backend, tensorflows):
    assert tensorflows["m_k"] == 0 and tensorflows["m_h"] == -3  # what the finding was about
    assert tensorflows["p_32"] == 0 and tensorflows["p_32"].dtype == np.int32  # and audit11 I1
    result = runner.run(load(SPEC, "ints"), backend=backend)
    for name, expected in tensorflows.items():
        got = np.asarray(result.values[name])
        assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
        assert got.shape == expected.shape and np.array_equal(got, expected), (name, got, expected)
    # dy/dx of sum(x * mean(k)) is TensorFlow's integer mean, 0, not numpy's 0.8
    np.testing.assert_array_equal(result.gradients["y"]["x"].overridden, [0.0, 0.0])
    # dz/dx of sum(x * prod(p32)) is TensorFlow's wrapped product, 0, not 12884901888
    np.testing.assert_array_equal(result.gradients["z"]["x"].overridden, [0.0, 0.0])


@pytest.mark.parametrize("text, where, hint", [
    ("outputs:\n  y: mean(x > 0) + sum(x)\n", "spec.yaml:5:6", "mean(cast(x > 0, dtype(x)))"),
    ("let:\n  c: x > 0\n  d: c[1:]\noutputs:\n  y: sum(x) + sum(d)\n", "spec.yaml:8:15",
     "sum(cast(d, dtype(x)))"),
    ("outputs:\n  y: sum(x) * sum(b)\n", "spec.yaml:5:15", "sum(cast(b, dtype(x)))"),
    ("outputs:\n  y: mean(cast(x, bool)) + sum(x)\n", "spec.yaml:5:6", "mean(cast(cast(x, bool)"),
    ("outputs:\n  y: sum(x)\ntrain:\n  loss: y\n  optimizer: {name: sgd, lr: 0.1}\n  steps: 1\n"
     "  metrics:\n    acc: mean(argmax(reshape(x, [3, 1]), axis=1) == 0)\n", "spec.yaml:11:10",
     "mean(cast(argmax(reshape(x, [3, 1]), axis=1) == 0, dtype(x)))"),
])
def test_a_boolean_sum_or_mean_is_refused_as_the_spec_loads(tmp_path, text, where, hint):
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow has no kernel for it
        tf.reduce_mean(tf.constant([True, False]))
    spec = "inputs:\n  x: [1.0, -2.0, 3.0]\n  b: {value: [true, false], dtype: bool}\n" + text
    with pytest.raises(SpecError) as caught:
        load(spec)
    message = str(caught.value)
    assert message.startswith(f"{where}: ") and "of a boolean tensor is not defined" in message
    assert hint in message
    path = tmp_path / "spec.yaml"
    path.write_text(spec)
    for command in ("check", "run"):  # check refuses what run refuses, in the same words
        out = CliRunner().invoke(cli, [command, str(path)], env={"NO_COLOR": "1", "COLUMNS": "300"})
        assert out.exit_code == 2 and "of a boolean tensor is not defined" in out.stderr
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr


FUNCTION = """
inputs:
  x: [1.0, -2.0, 3.0]
functions:
  count:
    args: [v]
    forward: sum(v)
    gradient: [none]
outputs:
  y: sum(x) + cast(count(x > 0), dtype(x))
"""


def test_a_boolean_only_the_run_sees_is_refused_alike_on_every_backend(backend):
    spec = load(FUNCTION)  # the function's argument has no dtype until it is called
    with pytest.raises(SpecError) as caught:
        runner.run(spec, backend=backend)
    message = str(caught.value)
    assert "sum of a boolean tensor is not defined, as TensorFlow's reduce_sum" in message
    assert "cast it first" in message and "NodeDef" not in message


@pytest.mark.parametrize("op", ["max", "min", "prod"])
def test_a_boolean_max_min_or_prod_is_refused_like_a_sum(tmp_path, backend, op):
    # numpy, torch and jax answered True / False / 0, tensorflow failed with a NodeDef dump
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow has no kernel for it
        getattr(tf, f"reduce_{op}")(tf.constant([True, False]))
    with pytest.raises(SpecError) as caught:  # where the expression shows it: as it loads
        load(f"inputs:\n  x: [1.0, -2.0, 3.0]\noutputs:\n  y: {op}(x > 0)\n")
    assert str(caught.value).startswith("spec.yaml:4:6: ")
    assert f"{op}(cast(x > 0, dtype(x)))" in str(caught.value)
    spec = load(FUNCTION.replace("forward: sum(v)", f"forward: {op}(v)"))
    with pytest.raises(SpecError) as caught:  # where only the run sees it: every backend alike
        runner.run(spec, backend=backend)
    message = str(caught.value)
    assert f"{op} of a boolean tensor is not defined, as TensorFlow's reduce_{op}" in message
    assert "cast it first" in message and "NodeDef" not in message
