"""Inputs: literal conversion, dtypes, trainability, seeded draws, fills, .npz loads, limits."""
from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

from gradcli.errors import SpecError
from gradcli.spec import load_spec


def spec(inputs: str, outputs: str = "y: sum(x)", head: str = "") -> str:
    return f"{head}inputs:\n{inputs}outputs:\n  {outputs}\n"


def test_literals_become_floats_of_the_spec_dtype(load):
    exp = load(spec("  x: [1, 2, 3]\n  s: 2\n"))
    assert exp.inputs["x"].value.dtype == np.float64
    np.testing.assert_array_equal(exp.inputs["x"].value, [1.0, 2.0, 3.0])
    assert exp.inputs["s"].value.shape == ()
    exp32 = load(spec("  x: [[1, 2], [3, 4.5]]\n", head="dtype: float32\n"))
    assert exp32.inputs["x"].value.dtype == np.float32 and exp32.inputs["x"].value.shape == (2, 2)


def test_numbers_yaml_reads_as_strings_are_numbers(load):
    # PyYAML resolves 1e-3 (no dot) to a string; the loader takes it as the number it means.
    value = load(spec("  x: [1e-3, -2E2, .inf]\n")).inputs["x"].value
    assert value[0] == 0.001 and value[1] == -200.0 and np.isposinf(value[2])


def test_trainable_defaults(load):
    exp = load(spec("  x: [1.0]\n  m: [true, false]\n  i: {value: [0, 2], dtype: int64}\n"
                    "  c: {value: 1.0, trainable: false}\n"))
    flags = {n: s.trainable for n, s in exp.inputs.items()}
    assert flags == {"x": True, "m": False, "i": False, "c": False}
    assert exp.inputs["m"].value.dtype == np.bool_ and exp.inputs["i"].value.dtype == np.int64
    assert exp.wrt == ("x",)


def test_int_inputs_are_never_trainable(spec_error):
    err = spec_error(spec("  i: {value: [1, 2], dtype: int32, trainable: true}\n"))
    assert str(err).splitlines()[0] == ("spec.yaml:2:47: inputs.i.trainable: an int32 input is "
                                        "never trainable (use a float dtype, or remove "
                                        "'trainable: true')")


@pytest.mark.parametrize("inputs, message", [
    ("  i: {value: [1.5], dtype: int64}\n", "expected an integer in an int64 tensor, got 1.5"),
    ("  i: {value: [3000000000], dtype: int32}\n", "3000000000 does not fit in int32"),
    ("  b: {value: [2], dtype: bool}\n", "expected true or false in a bool tensor, got 2"),
    ("  x: [1.0, true]\n", "a boolean in a float tensor"),
    ("  x: {value: 1.0e300, dtype: float32}\n", "1e+300 is too large for float32"),
    ("  x: {value: [1, 2, 3], shape: [2, 2]}\n", "cannot reshape 3 elements to shape [2, 2]"),
    ("  x: {uniform: [0, 1]}\n", "a uniform input needs a shape"),
    ("  x: {uniform: [1, 0], shape: 2}\n", "uniform needs low < high, got [1, 0]"),
    ("  x: {normal: [0, -1], shape: 2}\n", "normal needs std >= 0, got -1"),
    ("  x: {uniform: [0, 1], shape: 2, dtype: int64}\n", "uniform gives floats"),
    ("  x: {zeros: 3, shape: 3}\n", "zeros already gives the shape; remove 'shape'"),
    ("  x: {zeros: [-1]}\n", "expected an integer between 0 and 10000000, got -1"),
    ("  x: {value: 1, zeros: 2}\n", "needs exactly one of value, uniform, normal, zeros, ones, "
                                    "linspace, load; got value, zeros"),
    ("  x: {shape: 2}\n", "got none"),
    ("  x: {value: 1, key: a}\n", "'key' only goes with 'load'"),
    ("  x: {linspace: [0, 1]}\n", "expected [start, stop, count], got a list of 2"),
    ("  x: {value: 1, dtype: float16}\n", "unknown value 'float16'"),
    ("  x: " + "[" * 9 + "1" + "]" * 9 + "\n", "at most 8 dimensions"),
])
def test_bad_inputs(inputs, message, spec_error):
    assert message in str(spec_error(spec(inputs)))


@pytest.mark.parametrize("inputs, column, message", [
    # numpy's draw refuses a range wider than float64's (an OverflowError, once an internal error)
    ("  x: {uniform: [-1e308, 1e308], shape: [3]}\n", 16,
     "inputs.x.uniform: uniform needs high - low within float64's range (below 1.8e308), got "
     "[-1e+308, 1e+308] (narrow the range)"),
    ("  x: {uniform: [-1.7e308, 1.7e308], shape: [3], dtype: float32}\n", 16,
     "inputs.x.uniform: uniform needs high - low within float64's range"),
    # inf and nan are numbers to YAML: the message says which number is refused
    ("  x: {uniform: [0, .inf], shape: [3]}\n", 20, "inputs.x.uniform: expected a finite number, got .inf"),
    ("  x: {normal: [0, .inf], shape: [3]}\n", 19, "inputs.x.normal: expected a finite number, got .inf"),
    ("  x: {normal: [.nan, 1], shape: [3]}\n", 16, "inputs.x.normal: expected a finite number, got .nan"),
    ("  x: {linspace: [0, -.inf, 3]}\n", 21, "inputs.x.linspace: expected a finite number, got -.inf"),
])
def test_random_and_range_recipes_refuse_bounds_numpy_cannot_take(inputs, column, message, spec_error):
    first = str(spec_error(spec(inputs))).splitlines()[0]
    assert first.startswith(f"spec.yaml:2:{column}: {message}")


def test_extreme_but_valid_draws_still_draw(load):
    # the widest range numpy takes, and a normal whose std overflows only some draws
    exp = load(spec("  u: {uniform: [-8e307, 8e307], shape: [3]}\n"
                    "  n: {normal: [0, 1e308], shape: [3]}\n", "y: sum(u)", head="seed: 3\n"))
    expected = np.random.default_rng([3, zlib.crc32(b"u")]).uniform(-8e307, 8e307, size=(3,))
    np.testing.assert_array_equal(exp.inputs["u"].value, expected)
    with np.errstate(over="ignore"):
        expected = np.random.default_rng([3, zlib.crc32(b"n")]).normal(0, 1e308, size=(3,))
    np.testing.assert_array_equal(exp.inputs["n"].value, expected)


def test_fills_and_ranges(load):
    exp = load(spec("  z: {zeros: [2, 3]}\n  o: {ones: 4, dtype: int32}\n"
                    "  l: {linspace: [0, 1, 5], shape: [5, 1]}\n", "y: sum(l)"))
    assert exp.inputs["z"].value.shape == (2, 3) and not exp.inputs["z"].value.any()
    assert exp.inputs["o"].value.dtype == np.int32 and exp.inputs["o"].value.sum() == 4
    np.testing.assert_array_equal(exp.inputs["l"].value.ravel(), [0, 0.25, 0.5, 0.75, 1])


def test_random_draws_derive_from_seed_and_name(load):
    text = spec("  w: {uniform: [-1, 1], shape: [3]}\n  n: {normal: [2, 0.5], shape: [2, 2]}\n",
                "y: sum(w)", head="seed: 7\n")
    exp = load(text)
    expected = np.random.default_rng([7, zlib.crc32(b"w")]).uniform(-1, 1, size=(3,))
    np.testing.assert_array_equal(exp.inputs["w"].value, expected)
    expected = np.random.default_rng([7, zlib.crc32(b"n")]).normal(2, 0.5, size=(2, 2))
    np.testing.assert_array_equal(exp.inputs["n"].value, expected)
    # Reproducible, and independent of other inputs and their order.
    np.testing.assert_array_equal(load(text).inputs["w"].value, exp.inputs["w"].value)
    moved = load(spec("  a: {uniform: [0, 1], shape: [9]}\n  n: {normal: [2, 0.5], shape: [2, 2]}"
                      "\n  w: {uniform: [-1, 1], shape: [3]}\n", "y: sum(w)", head="seed: 7\n"))
    np.testing.assert_array_equal(moved.inputs["w"].value, exp.inputs["w"].value)
    other_seed = load(text.replace("seed: 7", "seed: 8"))
    assert not np.array_equal(other_seed.inputs["w"].value, exp.inputs["w"].value)


def test_float32_draws_are_the_float64_draws_rounded(load):
    exp = load(spec("  w: {uniform: [-1, 1], shape: [3]}\n", "y: sum(w)", head="dtype: float32\n"))
    expected = np.random.default_rng([0, zlib.crc32(b"w")]).uniform(-1, 1, size=3)
    np.testing.assert_array_equal(exp.inputs["w"].value, expected.astype(np.float32))


# ----- load: -----
@pytest.fixture
def spec_dir(tmp_path):
    """A spec directory holding data files, and a sibling directory outside it."""
    inside = tmp_path / "specs"
    inside.mkdir()
    np.savez(inside / "two.npz", a=np.arange(6.0).reshape(2, 3), b=np.array([1, 2, 3]))
    np.savez(inside / "one.npz", np.ones(3, dtype=np.float32))
    (inside / "sub").mkdir()
    np.savez(inside / "sub" / "deep.npz", v=np.array([True, False]))
    outside = tmp_path / "secret"
    outside.mkdir()
    np.savez(outside / "s.npz", s=np.zeros(2))
    return inside


def load_in(spec_dir, inputs: str, outputs: str = "y: sum(x)"):
    path = spec_dir / "spec.yaml"
    path.write_text(spec(inputs, outputs))
    return load_spec(path)


def test_load_arrays(spec_dir):
    exp = load_in(spec_dir, "  x: {load: two.npz, key: a}\n  i: {load: two.npz, key: b}\n"
                            "  o: {load: one.npz}\n  m: {load: sub/deep.npz}\n"
                            "  r: {load: two.npz, key: a, shape: [6]}\n")
    np.testing.assert_array_equal(exp.inputs["x"].value, np.arange(6.0).reshape(2, 3))
    assert exp.inputs["x"].trainable
    assert exp.inputs["i"].value.dtype == np.int64 and not exp.inputs["i"].trainable
    assert exp.inputs["o"].value.dtype == np.float64        # floats take the spec dtype
    assert exp.inputs["m"].value.dtype == np.bool_
    assert exp.inputs["r"].value.shape == (6,)


@pytest.mark.parametrize("load_text, message", [
    ("two.npz", "two.npz holds 2 arrays (a, b); choose one with key:"),
    ("two.npz, key: c", "two.npz has no array 'c'; it holds a, b"),
    ("../secret/s.npz", "leaves the spec's directory"),
    ("sub/../../secret/s.npz", "leaves the spec's directory"),
    ("link.npz", "leaves the spec's directory"),
    ("/etc/passwd.npz", "is absolute"),
    ("two.npy", "load takes a .npz file"),
    ("missing.npz", "does not exist in the spec's directory"),
    ("notzip.npz", "cannot read notzip.npz as a .npz file"),
    ("pickled.npz", "only bool, integer and float arrays can be inputs"),
])
def test_load_refusals(spec_dir, load_text, message):
    os.symlink(spec_dir.parent / "secret" / "s.npz", spec_dir / "link.npz")
    (spec_dir / "notzip.npz").write_text("not a zip")
    np.savez(spec_dir / "pickled.npz", p=np.array([{"a": 1}], dtype=object))
    with pytest.raises(SpecError) as info:
        load_in(spec_dir, f"  x: {{load: {load_text}}}\n")
    assert message in info.value.bare_message
    assert info.value.line == 2 and info.value.key == "inputs.x.load"


def test_symlink_staying_inside_is_fine(spec_dir):
    os.symlink(spec_dir / "one.npz", spec_dir / "alias.npz")
    assert load_in(spec_dir, "  x: {load: alias.npz}\n").inputs["x"].value.shape == (3,)


# ----- limits -----
def test_element_limits(spec_error, load):
    assert "has 10001000 elements; the limit is 10000000" in str(
        spec_error(spec("  x: {zeros: [10001, 1000], dtype: bool}\n")))
    assert "the limit is 8" in str(spec_error(spec("  x: {zeros: [1, 1, 1, 1, 1, 1, 1, 1, 1]}\n")))
    six = "".join(f"  x{i}: {{zeros: [9000000], dtype: bool}}\n" for i in range(6))
    err = spec_error(spec(six, "y: sum(x0)"))
    assert err.key == "inputs.x5" and "54000000 elements in all; the limit is 50000000" in str(err)
