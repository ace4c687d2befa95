"""An op on tensors of two dtypes is refused as TensorFlow 2.21 refuses it, on every backend
(audit10 minor: `k + x`, int64 k and float64 x, was [-6.0, 7.0, 6.0] on numpy, torch and jax,
an error in TensorFlow's words on tensorflow).

- where the expression shows both dtypes: refused as the spec loads, with its place (check too);
- where only the run sees them (a function's argument): every backend refuses in one message;
- one dtype, bare numbers beside a tensor, and integer truediv still give TensorFlow's values.

Oracle: TensorFlow itself, called here.
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

INPUTS = {  # name: (values, dtype)
    "k": ([-7, 5, 3], "int64"),
    "j": ([2, 1, 4], "int32"),
    "x": ([1.0, 2.0, 3.0], "float64"),
    "f": ([1.0, 2.0, 3.0], "float32"),
    "c": ([True, False, True], "bool"),
}
HEAD = "inputs:\n" + "".join(f"  {n}: {{value: {str(v).lower()}, dtype: {d}}}\n"
                             for n, (v, d) in INPUTS.items())
REFUSED = {  # expression: (TensorFlow's op on the tensors, the hint's cast)
    "k + x": (lambda t: tf.add(t["k"], t["x"]), "cast(k, dtype(x))"),
    "x - k": (lambda t: tf.subtract(t["x"], t["k"]), "cast(k, dtype(x))"),
    "k * x": (lambda t: tf.multiply(t["k"], t["x"]), "cast(k, dtype(x))"),
    "k / x": (lambda t: tf.math.truediv(t["k"], t["x"]), "cast(k, dtype(x))"),
    "x ** k": (lambda t: tf.pow(t["x"], t["k"]), "cast(k, dtype(x))"),
    "maximum(k, x)": (lambda t: tf.maximum(t["k"], t["x"]), "cast(k, dtype(x))"),
    "minimum(x, j)": (lambda t: tf.minimum(t["x"], t["j"]), "cast(j, dtype(x))"),
    "k < x": (lambda t: tf.less(t["k"], t["x"]), "cast(k, dtype(x))"),
    "k == x": (lambda t: tf.equal(t["k"], t["x"]), "cast(k, dtype(x))"),
    "where(c, k, x)": (lambda t: tf.where(t["c"], t["k"], t["x"]), "cast(k, dtype(x))"),
    "concat([x, k])": (lambda t: tf.concat([t["x"], t["k"]], 0), "cast(k, dtype(x))"),
    "stack([k, x])": (lambda t: tf.stack([t["k"], t["x"]]), "cast(k, dtype(x))"),
    "matmul(reshape(k, [1, 3]), reshape(x, [3, 1]))": (
        lambda t: tf.matmul(tf.reshape(t["k"], [1, 3]), tf.reshape(t["x"], [3, 1])),
        "cast(reshape(k, [1, 3]), float64)"),
    "j + k": (lambda t: tf.add(t["j"], t["k"]), "cast(j, dtype(k))"),
    "j / k": (lambda t: tf.math.truediv(t["j"], t["k"]), "cast(j, dtype(k))"),
    "f * x": (lambda t: tf.multiply(t["f"], t["x"]), "cast(f, dtype(x))"),
    "k + c": (lambda t: tf.add(t["k"], t["c"]), "cast(c, dtype(k))"),
    "x * c": (lambda t: tf.multiply(t["x"], t["c"]), "cast(c, dtype(x))"),
    "clip(x, 0.0, k)": (lambda t: tf.clip_by_value(t["x"], 0.0, t["k"]), "cast(k, dtype(x))"),
    "cast(k, float32) + x": (lambda t: tf.add(tf.cast(t["k"], tf.float32), t["x"]),
                             "cast(cast(k, float32), dtype(x))"),
}


def tensors():
    return {n: tf.constant(np.array(v, dtype=d)) for n, (v, d) in INPUTS.items()}


@pytest.mark.parametrize("expression", list(REFUSED))
def test_a_mix_the_expression_shows_is_refused_as_the_spec_loads(expression):
    tf_op, hint = REFUSED[expression]
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError, ValueError)):
        tf_op(tensors())  # TensorFlow promotes neither dtype
    spec = HEAD + f"outputs:\n  y: sum(x)\n  r: {expression}\n"
    with pytest.raises(SpecError) as caught:
        load(spec)
    message = str(caught.value)
    operator = [w for w in expression.split(" ") if w in ("+", "-", "*", "/", "**", "<", "==")]
    column = 6 + (expression.index(f" {operator[0]} ") + 1 if operator else 0)  # or the call
    assert message.startswith(f"spec.yaml:9:{column}: outputs.r: "), message
    assert "tensor is not defined, as TensorFlow promotes neither dtype" in message
    assert f"cast one of them first: {hint}" in message


def test_check_and_run_refuse_it_with_its_place_and_exit_2(tmp_path):
    path = tmp_path / "pr.yaml"  # audit10's /tmp/a10/pr.yaml
    path.write_text("inputs:\n  k: {value: [-7, 5, 3], dtype: int64}\n  x: [1.0, 2.0, 3.0]\n"
                    "outputs:\n  y: sum(k + x)\n")
    for command in ("check", "run"):
        out = CliRunner().invoke(cli, [command, str(path)], env={"NO_COLOR": "1", "COLUMNS": "300"})
        assert out.exit_code == 2, out.output
        assert f"{path}:5:12: outputs.y: add() of an int64 tensor and a float64 tensor" in out.stderr
        assert "cast(k, dtype(x))" in out.stderr and "AddV2" not in out.stderr
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr


FUNCTION = HEAD + """functions:
  both:
    args: [a, b]
    forward: OP
    gradient: [none, none]
outputs:
  y: sum(x)
  r: both(FIRST, SECOND)
"""


@pytest.mark.parametrize("op, first, second, dtypes", [
    ("a + b", "k", "x", "an int64 tensor and a float64 tensor"),
    ("a * b", "x", "c", "a float64 tensor and a bool tensor"),
    ("a / b", "j", "k", "an int32 tensor and an int64 tensor"),
    ("where(a > 0, a, b)", "k", "x", "an int64 tensor and a float64 tensor"),
    ("concat([a, b])", "x", "k", "a float64 tensor and an int64 tensor"),
    ("matmul(reshape(a, [1, 3]), reshape(b, [3, 1]))", "f", "x",
     "a float32 tensor and a float64 tensor"),
])
def test_a_mix_only_the_run_sees_is_refused_alike_on_every_backend(backend, op, first, second,
                                                                    dtypes):
    spec = load(FUNCTION.replace("OP", op).replace("FIRST", first).replace("SECOND", second))
    with pytest.raises(SpecError) as caught:  # the argument has no dtype until it is called
        runner.run(spec, backend=backend)
    message = str(caught.value)
    assert message.startswith("spec.yaml:")
    assert f"of {dtypes} is not defined, as TensorFlow promotes neither dtype" in message
    assert "cast one of them first" in message
    assert not any(words in message for words in ("AddV2", "NodeDef", "expected m1", "promote"
                                                  " types"))


ALLOWED = {  # let name: (expression, TensorFlow's op on the tensors)
    "same": ("k + k", lambda t: t["k"] + t["k"]),
    "same32": ("j * j", lambda t: t["j"] * t["j"]),
    "idiv": ("k / k", lambda t: tf.math.truediv(t["k"], t["k"])),     # float64, as TF
    "idiv32": ("j / j", lambda t: tf.math.truediv(t["j"], t["j"])),
    "whole": ("k + 2", lambda t: t["k"] + 2),                         # stays int64
    "times": ("x * 3", lambda t: t["x"] * 3),
    "chosen": ("where(c, k, k * 2)", lambda t: tf.where(t["c"], t["k"], t["k"] * 2)),
    "stacked": ("stack([k, k + 1])", lambda t: tf.stack([t["k"], t["k"] + 1])),
    "cast_first": ("cast(k, dtype(x)) + x", lambda t: tf.cast(t["k"], tf.float64) + t["x"]),
    "mask": ("x * cast(c, dtype(x))", lambda t: t["x"] * tf.cast(t["c"], tf.float64)),
    "below": ("k < 4", lambda t: t["k"] < 4),
    "f32": ("f * 0.1", lambda t: t["f"] * 0.1),
}


def test_one_dtype_bare_numbers_and_integer_truediv_are_tensorflows(backend):
    spec = HEAD + "let:\n" + "".join(f"  {n}: {e}\n" for n, (e, _) in ALLOWED.items())
    result = runner.run(load(spec + "outputs:\n  y: sum(x)\n"), backend=backend)
    t = tensors()
    for name, (_, op) in ALLOWED.items():
        expected, got = op(t).numpy(), np.asarray(result.values[name])
        assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
        np.testing.assert_array_equal(got, expected, err_msg=name)
