"""gradcli.norms, the one helper behind the run summary's and a sweep's norms and cosines:
right over float64's whole range, and for ordinary vectors the plain formulas bit for bit.

Oracle: math.hypot (scaled and correctly rounded in CPython) and math.fsum; numpy's plain
sqrt(sum(x**2)) for the bit-for-bit check."""
import math

import numpy as np
import pytest

from gradcli import norms


@pytest.mark.parametrize("exponent", [-1070, -600, -330, -200, -160, 0, 150, 160, 300, 1020])
def test_norm_and_cosine_at_every_scale(exponent):
    rng = np.random.default_rng(exponent + 2000)
    a, b = rng.standard_normal(50), rng.standard_normal(50)
    scale = 2.0 ** exponent           # exact: a * scale keeps every bit above the subnormals
    sa, sb = a * scale, b * 2.0 ** (-exponent // 3)
    assert norms.norm(sa) == pytest.approx(math.hypot(*sa), rel=1e-13 if exponent > -1000 else 1e-3)
    cos = math.fsum(a * b) / (math.hypot(*a) * math.hypot(*b))
    if exponent > -1000:
        assert norms.cosine(sa, sb) == pytest.approx(cos, rel=1e-13, abs=1e-15)
    assert norms.cosine(-sa, sa) == pytest.approx(-1.0, abs=1e-15) and norms.cosine(sa, 0 * sa) == 0.0


def test_edges():
    assert norms.norm([]) == 0.0 and norms.norm([0.0, -0.0]) == 0.0
    assert norms.cosine([], []) == 1.0 and norms.cosine([0.0], [0.0]) == 1.0
    assert math.isnan(norms.norm([1.0, math.nan])) and norms.norm([1e300, -math.inf]) == math.inf
    assert math.isnan(norms.cosine([1.0, math.nan], [1.0, 2.0]))
    assert norms.norm([1e308, 1e308]) == pytest.approx(math.hypot(1e308, 1e308), rel=1e-15)
    assert norms.norm([5e-324, 5e-324]) == math.hypot(5e-324, 5e-324)


def test_ordinary_vectors_keep_the_plain_formulas_bit_for_bit():
    rng = np.random.default_rng(7)
    for size in (1, 3, 100, 10_000):
        for spread in (1e-100, 1e-3, 1.0, 1e40, 1e100):
            a, b = rng.standard_normal(size) * spread, rng.standard_normal(size) * spread
            na, nb = np.sqrt(np.sum(a ** 2)), np.sqrt(np.sum(b ** 2))
            assert norms.norm(a) == na and norms.norm(b) == nb
            assert norms.cosine(a, b) == float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


def test_rms_norm_is_the_root_mean_of_the_rows_squared_norms():
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((4, 30))
    for exponent in (-700, -200, 0, 200, 700):
        scaled = rows * 2.0 ** exponent
        want = math.sqrt(math.fsum(math.hypot(*r) ** 2 for r in rows) / 4) * 2.0 ** exponent
        assert norms.rms_norm(scaled) == pytest.approx(want, rel=1e-14)
    assert norms.rms_norm(rows) == np.sqrt(np.mean(np.sum(rows ** 2, axis=1)))  # bit for bit
