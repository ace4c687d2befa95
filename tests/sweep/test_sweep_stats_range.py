"""A sweep's gradient statistics (grad_mean_norm, grad_std, bias, cosine_of_means) over
float64's whole range (audit9's finding 2): np.linalg.norm of means near 1e-174 gave 0 and
near 1e174 inf.

Oracle: exact rationals (fractions) for the means and squared sums, mpmath at 50 digits for
the square roots."""
from fractions import Fraction

import mpmath
import pytest

from gradcli.sweep.stats import gradient_stats

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
