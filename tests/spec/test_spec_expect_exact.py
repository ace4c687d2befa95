"""`expect` compares an integer value exactly and shows a miss with digits that differ
(audit11 E1, M1): through float64, int64 9007199254740993 met an expected ...992 with rtol 0
and atol 0, a gap of 1 was reported as 2, and both sides printed as 9.0072e+15 (a float as
"expected 1, got 1"). Oracles: Python's exact integers and fractions, numpy.allclose."""
import json
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.expected import miss

BIG = 2 ** 53 + 1  # 9007199254740993: the first integer float64 cannot hold


def run(tmp_path, text: str):
    path = tmp_path / "e.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["run", str(path), "--format", "json", "--no-numeric"],
                                env={"NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)["expect"]["failures"]


def spec(q, values, tolerance="{rtol: 0, atol: 0}", dtype="int64"):
    return (f"inputs:\n  q: {{value: {q}, dtype: {dtype}}}\n  x: 1.0\n"
            "let:\n  s: sum(q)\n  m: max(q)\noutputs:\n  y: x * 2.0\n"
            f"expect:\n  values: {values}\n  tolerance: {tolerance}\n")


def test_int64_above_2_53_is_compared_exactly_as_the_audit_wrote_it(tmp_path):
    q = [BIG, 1]
    s, m = sum(q), max(q)  # Python's exact integers: 9007199254740994 and ...993
    code, failures = run(tmp_path, spec(q, f"{{s: {BIG}, m: {BIG - 1}, q: [{BIG - 1}, 1]}}"))
    assert code == 1
    assert failures == [
        f"values.s: expected {BIG}, got {s} (max |diff| {s - BIG}; rtol 0, atol 0)",
        f"values.m: expected {BIG - 1}, got {m} (max |diff| {m - (BIG - 1)}; rtol 0, atol 0)",
        f"values.q: expected [{BIG - 1} 1], got [{BIG} 1] (max |diff| 1; rtol 0, atol 0)"]
    assert float(BIG) == float(BIG - 1)  # what float64 saw: one number


def test_the_exact_values_pass(tmp_path):
    q = [BIG, 2 ** 62, -(2 ** 62)]
    code, failures = run(tmp_path, spec(q, f"{{s: {sum(q)}, m: {max(q)}, q: {q}}}"))
    assert (code, failures) == (0, [])


@pytest.mark.parametrize("gap, passes", [(3, True), (4, False), (-3, True), (-4, False)])
def test_atol_admits_an_integer_gap_up_to_it(tmp_path, gap, passes):
    q = [2 ** 62 + 7]
    expected = q[0] + gap
    code, failures = run(tmp_path, spec(q, f"{{m: {expected}}}", "{rtol: 0, atol: 3.5}"))
    assert passes == (abs(q[0] - expected) <= Fraction(3.5))
    assert code == (0 if passes else 1)
    if not passes:
        assert failures == [f"values.m: expected {expected}, got {q[0]} (max |diff| 4; "
                            "rtol 0, atol 3.5)"]


@pytest.mark.parametrize("gap", [4, 5])
def test_rtol_scales_with_the_exact_expected_value(tmp_path, gap):
    expected = 2 ** 62  # rtol 2**-60 of it is 4: float64 of 2**62 + 5 would be 2**62
    q = [expected + gap]
    code, _ = run(tmp_path, spec(q, f"{{m: {expected}}}", "{rtol: 8.673617379884035e-19, atol: 0}"))
    assert Fraction(8.673617379884035e-19) == Fraction(1, 2 ** 60)
    assert code == (0 if abs(q[0] - expected) <= Fraction(1, 2 ** 60) * expected else 1)
    assert code == (0 if gap == 4 else 1)


def test_int32_values_and_a_float_written_expectation(tmp_path):
    q = [2 ** 30, 2 ** 30 - 1, 5]
    wrapped = (sum(q) + 2 ** 31) % 2 ** 32 - 2 ** 31  # int32 sum wraps (docs/ops.md)
    code, failures = run(tmp_path, spec(q, f"{{s: {wrapped + 0.5}, q: [{q[0]}, {q[1]}, 5.0]}}",
                                        "{rtol: 0, atol: 0.25}", dtype="int32"))
    assert code == 1
    assert failures == [f"values.s: expected {wrapped + 0.5}, got {wrapped} "
                        "(max |diff| 0.5; rtol 0, atol 0.25)"]


def test_a_summarized_array_names_the_element_apart(tmp_path):
    q = [BIG + i for i in range(12)]
    expected = list(q)
    expected[6] -= 1
    code, failures = run(tmp_path, spec(q, f"{{q: {expected}}}"))
    assert code == 1
    (failure,) = failures
    assert failure.endswith(f"(max |diff| 1; rtol 0, atol 0; at [6]: expected {expected[6]}, "
                            f"got {q[6]})")


def test_a_float_miss_shows_digits_that_differ(tmp_path):
    text = ("inputs:\n  x: 1.0000001\noutputs:\n  y: x * 1.0\nexpect:\n  values: {y: 1.0000002}\n"
            "  gradients: {y: {x: 1.0000001}}\n  tolerance: {rtol: 0, atol: 0}\n")
    code, failures = run(tmp_path, text)
    assert code == 1
    gap = abs(1.0000002 - 1.0000001)
    assert failures == [f"values.y: expected 1.0000002, got 1.0000001 (max |diff| {gap:.3g}; "
                        "rtol 0, atol 0)",
                        "gradients.y.x: expected 1.0000001, got 1 (max |diff| 1e-07; "
                        "rtol 0, atol 0)"]


def test_a_float32_trained_parameter_shows_its_digits(tmp_path):
    text = ("dtype: float32\ninputs:\n  w: {value: 1.0, trainable: true}\noutputs:\n  y: w * w\n"
            "train:\n  loss: y\n  optimizer: {name: sgd, lr: 0.25}\n  steps: 1\n"
            "expect:\n  train: {params: {w: 0.50000001}}\n  tolerance: {rtol: 0, atol: 0}\n")
    code, failures = run(tmp_path, text)
    w = np.float32(1.0) - np.float32(0.25) * np.float32(2.0)  # one sgd step on w*w
    assert code == 1 and w == np.float32(0.5)
    assert failures == ["train.params.w: expected 0.50000001, got 0.5 (max |diff| 1e-08; "
                        "rtol 0, atol 0)"]


# The rule itself, against its oracles over many cases (fast: no run).

def exact_oracle(a: int, e, rtol: float, atol: float) -> bool:
    return abs(Fraction(a) - Fraction(e)) <= Fraction(atol) + Fraction(rtol) * abs(Fraction(e))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_integers_meet_exactly_as_fractions_say(dtype):
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    edges = [int(info.min), int(info.max), 0, 1, 2 ** 53, 2 ** 53 + 1]
    edges = [v for v in edges if info.min <= v <= info.max]
    for trial in range(400):
        a = int(rng.integers(info.min, info.max, dtype=dtype, endpoint=True)) if trial % 4 \
            else edges[trial // 4 % len(edges)]
        offset = int(rng.integers(-6, 7))
        e = a + offset if trial % 3 else a + offset * 2 ** int(rng.integers(0, 40))
        e = float(e) + 0.5 if trial % 7 == 0 else e
        rtol = [0.0, 1e-18, 2.0 ** -60, 1e-6][trial % 4]
        atol = [0.0, 1.0, 3.5, 1e-9, 2.0 ** 20][trial % 5]
        got = miss(np.array(e, dtype=object) if isinstance(e, int) else e,
                   np.array([a], dtype=dtype)[0], rtol, atol)
        assert (got is None) == exact_oracle(a, e, rtol, atol), (a, e, rtol, atol, got)
        if got is not None and isinstance(e, int):
            assert f"expected {e}, got {a} (max |diff| {abs(a - e)};" in got


def test_uint64_against_a_negative_or_larger_expectation():
    top = np.array([2 ** 64 - 1], dtype=np.uint64)
    assert miss(np.array([2 ** 64 - 1], dtype=object), top, 0.0, 0.0) is None
    assert miss(np.array([-1], dtype=object), top, 0.0, 0.0) == (
        f"expected [-1], got [{2 ** 64 - 1}] (max |diff| {2 ** 64}; rtol 0, atol 0)")


def test_an_integer_never_meets_nan_or_inf():
    assert miss(float("nan"), np.int64(3), 1e-6, 1e-9).endswith("(max |diff| NaN; rtol 1e-06, "
                                                                "atol 1e-09)")
    assert "max |diff| inf;" in miss(np.array([1.0, float("inf")]), np.array([1, 2]), 0.0, 1e9)


def test_floats_meet_exactly_when_numpy_allclose_says():
    rng = np.random.default_rng(5)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, 1e300])
    for trial in range(400):
        a = rng.normal(size=3) * 10.0 ** rng.integers(-5, 6)
        e = a * (1 + rng.choice([0.0, 1e-7, 1e-6, 2e-6]) * rng.choice([-1, 1], size=3))
        e = e + rng.choice([0.0, 1e-9, 5e-9], size=3)
        if trial % 5 == 0:
            a[trial % 3], e[trial % 3] = rng.choice(specials), rng.choice(specials)
        dtype = np.float32 if trial % 2 else np.float64
        with np.errstate(over="ignore"):  # 1e300 is inf in float32, as numpy casts it
            a = a.astype(dtype)
        rtol, atol = [(1e-6, 1e-9), (0.0, 0.0), (1e-3, 0.0)][trial % 3]
        expected = np.allclose(a.astype(np.float64), e, rtol=rtol, atol=atol, equal_nan=True)
        assert (miss(e, a, rtol, atol) is None) == expected, (a, e, rtol, atol)


def float_spec(values, tolerance="{rtol: 0, atol: 0}"):
    return ("inputs:\n  x: {value: [9007199254740992.0, 1.0], dtype: float64}\n"
            "outputs:\n  y: x[0] * 1.0\n  z: x\n"
            f"expect:\n  values: {values}\n  tolerance: {tolerance}\n")


def test_a_float_value_meets_an_integer_above_2_53_only_when_python_says_equal(tmp_path):
    # Python compares an int with a float exactly: the oracle; float64 read BIG as BIG - 1
    y = 9007199254740992.0
    assert y != BIG and y == BIG - 1 and float(BIG) == y
    code, failures = run(tmp_path, float_spec(f"{{y: {BIG}, z: [{BIG}, 1]}}"))
    assert code == 1
    assert failures == [
        f"values.y: expected {BIG}, got 9007199254740992.0 (max |diff| {BIG - int(y)}; "
        "rtol 0, atol 0)",
        f"values.z: expected [{BIG} 1], got [9007199254740992.0 1.0] (max |diff| 1; "
        "rtol 0, atol 0)"]
    code, failures = run(tmp_path, float_spec(f"{{y: {BIG - 1}, z: [{BIG - 1}, 1]}}"))
    assert (code, failures) == (0, [])
    code, failures = run(tmp_path, float_spec(f"{{y: {BIG}}}", "{rtol: 0, atol: 1}"))
    assert (code, failures) == (0, [])  # |y - BIG| = 1 <= atol, exactly


@pytest.mark.parametrize("expected, actual", [
    (3, 3.0000000001), (3, 3.001), (2, 2.0 + 1e-8), (0, 1e-9), (0, 1e-7), (-5, -5.00001),
    ([1, 2], [1.0, 2.00000002]), (BIG - 1, 9007199254740992.0)])
def test_ordinary_numbers_keep_the_default_tolerance_of_numpy_allclose(expected, actual):
    met = np.allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                      rtol=1e-5, atol=1e-8, equal_nan=True)
    assert (miss(expected, np.asarray(actual, dtype=np.float64), 1e-5, 1e-8) is None) == met
