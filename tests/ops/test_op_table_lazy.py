"""The op table's data needs no numpy (issue 14, "the cold path"): kernels named by place
("np.exp", "K.elu") are imported on first use, and the float32 constants are computed with
struct, bit for bit what numpy gives."""
from __future__ import annotations

import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.ops import OPS, kernels
from gradcli.ops.entry import OpSpec, op, resolve_kernel
from gradcli.ops.table import SQRT_HALF_F32, f32

ROOT = Path(__file__).resolve().parents[2]


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def test_reading_the_whole_table_imports_no_numpy():
    code = ("import sys\n"
            "from gradcli.ops import OPS, OPERATORS, BUILTIN_GRADIENTS\n"
            "data = [(s.signature, s.doc, s.gradient, s.result, s.operator, s.precedence,\n"
            "         [s.spelling(f) for f in ('torch', 'jax', 'tensorflow')], s.kernel_ref)\n"
            "        for s in OPS.values()]\n"
            "before = 'numpy' in sys.modules\n"
            "exp = OPS['exp'].kernel\n"
            "print(len(data), before, 'numpy' in sys.modules, exp.__name__)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    assert out == [str(len(OPS)), "False", "True", "exp"]  # numpy comes with the first kernel


def test_kernels_named_by_place_are_numpys_and_the_tables_own_functions():
    assert OPS["exp"].kernel is np.exp and OPS["transpose"].kernel is np.transpose
    assert OPS["sigmoid"].kernel is kernels.sigmoid and OPS["mean"].kernel is kernels.mean
    assert OPS["exp"].kernel_ref == "np.exp" and OPS["elu"].kernel_ref == "K.elu"
    import operator
    assert OPS["add"].kernel is operator.add  # a function stays itself
    assert OPS["stop_gradient"].kernel is None  # no kernel: the eager layer composes it
    # every reference resolves to a function (a typo would fail here, not in a spec's run)
    for spec in OPS.values():
        assert spec.kernel is None or callable(spec.kernel), spec.name
    # resolved once, then an ordinary attribute of the entry (the core reads it per op)
    assert "kernel" in vars(OPS["exp"]) and OPS["exp"].kernel is OPS["exp"].kernel


def test_a_kernel_named_by_text_must_name_numpy_or_kernels_py():
    with pytest.raises(ValueError, match="not one of np.<name>, K.<name>"):
        op("nothing(x)", "-", "os.system", family="unary")
    assert "nothing" not in OPS
    assert resolve_kernel("np.tanh") is np.tanh and resolve_kernel(None) is None
    spec = OpSpec("twice", ("x",), kernel_ref="np.negative", tensor_params=("x",))
    assert spec.kernel(np.array([2.0])).tolist() == [-2.0]


def test_f32_is_numpys_float32_rounding_bit_for_bit():
    special = [0.2, 0.7071067811865476, 0.1, 1e-45, 7e-46, 1e-46, -1e-46, 3.4028234663852886e38,
               3.4028235677973366e38, 3.402823669209385e38, 3.5e38, 1e300, -1e300, math.inf,
               -math.inf, math.nan, -math.nan, 0.0, -0.0, 1, -7, True, 2 ** 130,
               np.float64(0.3), np.float32(0.1), np.int64(3)]
    rng = random.Random(14)
    # random bit patterns: every exponent, subnormals, NaN payloads, the infinities
    randoms = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
               for _ in range(20000)]
    with np.errstate(all="ignore"):
        for value in special + randoms:
            assert bits(f32(value)) == bits(float(np.float32(value))), value
    assert bits(SQRT_HALF_F32) == bits(float(np.float32(0.7071067811865476)))


def test_leaky_relu_and_gelu_formulas_round_their_constants_as_numpy():
    x = np.array([-3.0, -0.5, 0.0, 0.25, np.nan])
    alpha32 = float(np.float32(0.3))
    np.testing.assert_array_equal(OPS["leaky_relu"].kernel(x, alpha=0.3),
                                  np.where(x > 0, x, x * alpha32))
    half = float(np.float32(math.sqrt(0.5)))
    expected = x * 0.5 * np.array([math.erfc(v) for v in (-x * half)])
    np.testing.assert_array_equal(OPS["gelu"].kernel(x), expected)
