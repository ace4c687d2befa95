"""Literals checked in plain Python, arrays made on first use (spec/arrays.py): the values
and refusals are numpy's own, asked directly here."""
from __future__ import annotations

import math
import warnings
import zlib

import numpy as np
import pytest

from gradcli.errors import SpecError

F32_MAX = float(np.finfo(np.float32).max)
EDGE = [F32_MAX, math.nextafter(F32_MAX, math.inf), 3.4028235677973362e38, 3.4028235677973366e38,
        math.nextafter(3.4028235677973366e38, math.inf), 1e39, 1.7e308]


def spec(inputs: str, rest: str = "outputs:\n  y: sum(x)\n", head: str = "") -> str:
    return f"{head}inputs:\n{inputs}{rest}"


@pytest.mark.parametrize("value", EDGE + [-v for v in EDGE])
def test_float32_refuses_exactly_what_numpy_rounds_to_infinity(value, load):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        overflows = bool(np.isinf(np.array([value]).astype(np.float32))[0])
    text = spec(f"  x: [1.0, {value!r}]\n", head="dtype: float32\n")
    if overflows:
        with pytest.raises(SpecError, match=r"spec\.yaml:3:12: inputs\.x: .* is too large for float32"):
            load(text)
    else:
        got = load(text).inputs["x"].value
        assert got.dtype == np.float32 and got[1] == np.float32(value)


@pytest.mark.parametrize("literal, dtype", [
    ("[[1, 2.5], [-0.0, 1e-320]]", "float64"), ("[[1, 2.5], [-0.0, 1e-320]]", "float32"),
    ("[0.1, 0.2, 0.30000000000000004, .nan, -.inf]", "float32"), ("[3, -4]", "int32"),
    ("[9223372036854775807, -9223372036854775808]", "int64"), ("[true, 0, 1]", "bool"),
    ("7", "float32"), ("[]", "float64"), ("[[], []]", "int64"),
])
def test_literal_values_are_numpy_conversions_of_the_numbers(literal, dtype, load):
    import yaml

    # cast: a boolean has no sum (as in TensorFlow)
    got = load(spec(f"  x: {{value: {literal}, dtype: {dtype}, trainable: false}}\n",
                    "outputs:\n  y: sum(cast(x, float64))\n")).inputs["x"]
    assert got.dtype == dtype  # known before the array is made
    numbers = yaml.safe_load(literal.replace("1e-320", "1.0e-320"))  # PyYAML's own .nan (signed)
    want = np.array(numbers, dtype=np.float64 if dtype.startswith("float") else None).astype(dtype)
    assert got.value.dtype == want.dtype and got.value.shape == want.shape
    assert got.value.tobytes() == want.tobytes()


def test_an_input_is_made_once_and_then_shared(load):
    exp = load(spec("  x: [1.0, 2.0]\n  r: {uniform: [0, 1], shape: [2]}\n  z: {zeros: 2}\n",
                    rest="outputs:\n  y: sum(x * r + z)\ngrad_ys:\n  y: 2.0\n"
                         "expect:\n  values: {y: 1.0}\n"))
    for spec_ in exp.inputs.values():
        assert spec_.value is spec_.value
    assert exp.grad_ys["y"] is exp.grad_ys["y"] and exp.grad_ys["y"].dtype == np.float64
    assert exp.expect.values["y"] is exp.expect.values["y"]
    assert dict(exp.grad_ys) == {"y": 2.0} and list(exp.expect.values) == ["y"]


def test_draws_and_ranges_made_later_are_the_seeded_ones(load):
    exp = load(spec("  a: {uniform: [-1, 1], shape: [3, 2], dtype: float32}\n"
                    "  b: {normal: [1, 2], shape: [4]}\n  c: {linspace: [0, 1, 6], shape: [2, 3]}\n"
                    "  d: {ones: [2], dtype: int32}\n", rest="outputs:\n  y: sum(a)\n",
                    head="seed: 5\n"))
    rng = np.random.default_rng([5, zlib.crc32(b"a")])
    assert exp.inputs["a"].value.tobytes() == rng.uniform(-1, 1, (3, 2)).astype("float32").tobytes()
    rng = np.random.default_rng([5, zlib.crc32(b"b")])
    assert exp.inputs["b"].value.tobytes() == rng.normal(1, 2, (4,)).tobytes()
    assert exp.inputs["c"].value.tobytes() == np.linspace(0, 1, 6).reshape(2, 3).tobytes()
    assert exp.inputs["d"].value.dtype == np.int32 and exp.inputs["d"].value.tolist() == [1, 1]
    assert [exp.inputs[n].dtype for n in "abcd"] == ["float32", "float64", "float64", "int32"]


def test_a_draw_numpy_refuses_is_refused_while_loading_as_before(load):
    # numpy's float32 overflow warnings come as the spec loads, as before draws were made on
    # first use; check reports them too. The range numpy's draw refuses (an OverflowError) is
    # refused first, as a placed spec error (tests/spec/test_spec_inputs.py)
    with pytest.raises(SpecError, match="uniform needs high - low within float64's range"):
        load(spec("  x: {uniform: [-1.0e308, 1.0e308], shape: [3]}\n"))
    with pytest.warns(RuntimeWarning, match="overflow"):
        load(spec("  x: {normal: [0, 1.0e300], shape: [3]}\n", head="dtype: float32\n"))
