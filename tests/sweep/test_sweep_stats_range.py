"""A sweep's gradient statistics (grad_mean_norm, grad_std, bias, cosine_of_means) and its
columns' mean and std over float64's whole range (audit9's finding 2): np.linalg.norm of
means near 1e-174 gave 0 and near 1e174 inf; the means of runs near 1e308 overflowed (note9).

Oracle: exact rationals (fractions) for the means and squared sums, mpmath at 50 digits for
the square roots."""
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner

from gradcli import norms
from gradcli.cli import cli
from gradcli.sweep.stats import column_stats, gradient_stats

mpmath.mp.dps = 50


def exact(over: list, true: list):
    runs = len(over)
    g = [sum(Fraction(r[i]) for r in over) / runs for i in range(len(over[0]))]
    t = [sum(Fraction(r[i]) for r in true) / runs for i in range(len(true[0]))]

    def root(q: Fraction):
        return mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator)

    def norm(v):
        return root(sum(a * a for a in v))

    spread = root(sum(sum((Fraction(a) - b) ** 2 for a, b in zip(r, g)) for r in over) / runs)
    dot = sum(a * b for a, b in zip(g, t))
    cos = mpmath.mpf(dot.numerator) / dot.denominator / (norm(g) * norm(t))
    return float(norm(g)), float(spread), float(norm([a - b for a, b in zip(g, t)])), float(cos)


@pytest.mark.parametrize("scale", [1e-174, 1e-300, 1.0, 1e174, 1e300])
def test_gradient_stats_over_the_whole_range(scale):
    over = [[-1.5 * scale, 0.25 * scale], [-0.5 * scale, 0.75 * scale]]
    true = [[2.0 * scale, 1.0 * scale], [2.0 * scale, -0.5 * scale]]
    stats = gradient_stats(over, true)
    grad_mean_norm, grad_std, bias, cosine = exact(over, true)
    assert stats["n"] == 2 and stats["nonfinite"] == 0
    assert stats["grad_mean_norm"] == pytest.approx(grad_mean_norm, rel=1e-15)
    assert stats["grad_std"] == pytest.approx(grad_std, rel=1e-15)
    assert stats["bias"] == pytest.approx(bias, rel=1e-15)
    assert stats["cosine_of_means"] == pytest.approx(cosine, rel=1e-15)
    assert -1 < stats["cosine_of_means"] < 0   # ḡ = [-1, 0.5], t̄ = [2, 0.25]


# note9: g.mean(axis=0) over the runs summed past float64's range near 1e308 (inf mean, so
# grad_mean_norm inf, bias NaN); the deviations g_r - ḡ can pass it too (FOUR's first run)
NEAR_MAX = [
    ([[1.5e308, -3.0], [1.7e308, 1.0], [1.6e308, 2e300]],
     [[1.7e308, 1.0e307], [1.75e308, -1.0e307], [1.72e308, 0.5]]),
    ([[1.7e308, 1.0], [-1.7e308, 2.0], [-1.7e308, 3.0], [-1.7e308, 4.0]],
     [[-1.0e308, 1.0], [-1.0e308, 1.0], [-1.0e308, 1.0], [-1.0e308, 1.0]]),
]


@pytest.mark.parametrize("over, true", NEAR_MAX)
def test_gradient_stats_of_runs_near_the_largest_float(over, true):
    stats = gradient_stats(over, true)
    grad_mean_norm, grad_std, bias, cosine = exact(over, true)
    assert all(map(math.isfinite, (grad_mean_norm, grad_std, bias, cosine)))
    assert stats["n"] == len(over) and stats["nonfinite"] == 0
    assert stats["grad_mean_norm"] == pytest.approx(grad_mean_norm, rel=1e-15)
    assert stats["grad_std"] == pytest.approx(grad_std, rel=1e-15)
    # ḡ and t̄ are each rounded to float64 before ḡ − t̄ cancels ~14x: a few ulp, as at 1.0
    assert stats["bias"] == pytest.approx(bias, rel=1e-14)
    assert stats["cosine_of_means"] == pytest.approx(cosine, rel=1e-15)


def exact_column(values: list) -> tuple[float, float]:
    n = len(values)
    mean = sum(Fraction(v) for v in values) / n
    var = sum((Fraction(v) - mean) ** 2 for v in values) / (n - 1)
    return float(mean), float(mpmath.sqrt(mpmath.mpf(var.numerator) / var.denominator))


@pytest.mark.parametrize("values", [[1.6e308, 1.7e308, 1.5e308],
                                    [1.7e308, -1.7e308, -1.7e308, -1.7e308],
                                    [1e200, -1e200, 3e199]])  # squares past the range
def test_a_column_near_the_largest_float_has_its_mean_and_std(values):
    stats = column_stats(values)
    mean, std = exact_column(values)
    assert stats["mean"] == pytest.approx(mean, rel=1e-15)
    assert stats["std"] == pytest.approx(std, rel=1e-14)
    assert stats["n"] == len(values) and stats["nonfinite"] == 0


def test_ordinary_columns_and_gradients_keep_numpys_numbers_bit_for_bit():
    rng = np.random.default_rng(9)
    values = rng.standard_normal(7) * 3.0
    stats = column_stats(list(values))
    assert stats["mean"] == float(values.mean()) and stats["std"] == float(values.std(ddof=1))
    g = rng.standard_normal((5, 4))
    assert np.array_equal(norms.mean_rows(g), g.mean(axis=0))
    d, p = norms.scaled_difference(g, g.mean(axis=0))
    assert p == 1.0 and np.array_equal(d, g - g.mean(axis=0))


def test_a_sweep_of_runs_near_the_largest_float(tmp_path):
    """End to end: w is drawn per seed in [1.4e308, 1.7e308]; dy/dx = w * [1, -1e-300]. The
    oracle reads each run's gradients from its run file and averages them exactly."""
    spec = tmp_path / "big.yaml"
    spec.write_text("name: big\nseed: 0\ninputs:\n  x: [1.0, 1.0]\n"
                    "  w: {uniform: [1.4e308, 1.7e308], shape: [2], trainable: false}\n"
                    "outputs:\n  y: sum(w * [1.0, -1.0e-300] * x)\nwrt: [x]\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["sweep", str(spec), "--seeds", "3", "--jobs", "1",
                                    "--out", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    runs = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    over = [r["gradients"]["y"]["x"]["overridden"] for r in runs]
    true = [r["gradients"]["y"]["x"]["true"] for r in runs]
    assert len(over) == 3 and sum(Fraction(g[0]) for g in over) > Fraction(1.7976931348623157e308)
    stats = json.loads(done.stdout)["groups"][0]["gradients"]["y"]["x"]
    grad_mean_norm, grad_std, bias, cosine = exact(over, true)
    assert stats["grad_mean_norm"] == pytest.approx(grad_mean_norm, rel=1e-15)
    assert stats["grad_std"] == pytest.approx(grad_std, rel=1e-14)
    assert stats["bias"] == bias == 0.0 and stats["cosine_of_means"] == pytest.approx(cosine)
