"""run --format json's summary (cosine and both norms) over float64's whole range (audit9's
finding 2): gradients near 1e-174 gave norms 0 and a cosine of 1 where the signs never agree,
gradients near 1e174 a norm of Infinity and a cosine of 0.

Oracle: mpmath at 50 digits, on the gradients computed here by mpmath itself (d/dx exp = exp;
reverse_gradient negates it, grad_pass_through passes 1)."""
import json

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

mpmath.mp.dps = 50


def run_summary(tmp_path, x, expr):
    spec = tmp_path / "range.yaml"
    spec.write_text(f"inputs:\n  x: {x}\noutputs:\n  y: {expr}\n")
    result = CliRunner().invoke(cli, ["run", str(spec), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["summary"]["y"]["x"]


def oracle(over, true):
    norm_o = mpmath.sqrt(mpmath.fsum(v * v for v in over))
    norm_t = mpmath.sqrt(mpmath.fsum(v * v for v in true))
    return (mpmath.fdot(over, true) / (norm_o * norm_t), norm_o, norm_t)


CASES = {  # x, the output, the overridden gradient from the exact one
    "tiny, opposite": ([-400.0, -401.0], "sum(reverse_gradient(exp(x)))", lambda e: [-v for v in e]),
    "huge, one side": ([400.0, 401.0], "sum(grad_pass_through(exp(x)))", lambda e: [1, 1]),
    "huge and tiny": ([400.0, -400.0, 3.0], "sum(reverse_gradient(exp(x)))", lambda e: [-v for v in e]),
    "subnormal": ([-720.0, -725.0], "sum(reverse_gradient(exp(x)))", lambda e: [-v for v in e]),
}


@pytest.mark.parametrize("case", CASES)
def test_summary_norms_and_cosine_over_the_whole_range(tmp_path, case):
    x, expr, overridden = CASES[case]
    true = [mpmath.exp(v) for v in x]
    cosine, norm_o, norm_t = oracle([mpmath.mpf(v) for v in overridden(true)], true)
    summary = run_summary(tmp_path, x, expr)
    assert summary["cosine"] == pytest.approx(float(cosine), rel=1e-15, abs=1e-15)
    # the subnormal gradients themselves carry only ~15 bits: their norms are that exact
    rel = 1e-4 if case == "subnormal" else 1e-15
    assert summary["norm_overridden"] == pytest.approx(float(norm_o), rel=rel)
    assert summary["norm_true"] == pytest.approx(float(norm_t), rel=rel)


def test_ordinary_summary_numbers_are_the_plain_formulas_bit_for_bit(tmp_path):
    x = [0.3, -1.2, 2.0, 1e-3]
    summary = run_summary(tmp_path, x, "sum(reverse_gradient(exp(x)) * x)")
    xs = np.array(x)
    true = np.exp(xs) * xs + np.exp(xs)
    over = -np.exp(xs) * xs + np.exp(xs)   # reverse_gradient flips the exp factor's gradient
    assert summary["norm_true"] == np.sqrt(np.sum(true ** 2))
    assert summary["cosine"] == pytest.approx(
        float(np.dot(over, true) / (np.sqrt(np.sum(over ** 2)) * np.sqrt(np.sum(true ** 2)))), abs=1e-15)
