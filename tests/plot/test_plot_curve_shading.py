"""plot curve's "overridden ≠ true" shading only where both derivatives are numbers
(review8 F4): it took NaN for 0 and inf for 1.8e308, so where the true derivative of
sqrt(x) is NaN (x < 0) it shaded down to 0, as if the true derivative were 0 there.

Oracle: the derivatives written out in numpy: true 0.5 / sqrt(x) + 1 / x, overridden
2 + 1 / x (the registered gradient of Sqrt is dy * 2).
"""
import numpy as np
from test_plot_curve_numeric_nan import SQRT_LOG

from gradcli.curve import sweep
from gradcli.plot.curve import curve_figure
from gradcli.spec import load_spec_text


def test_the_shading_covers_only_points_where_both_are_finite_and_differ():
    xs = np.linspace(-2.0, 2.0, 41)
    with np.errstate(all="ignore"):
        true, overridden = 0.5 / np.sqrt(xs) + 1 / xs, 2 + 1 / xs
    curve = sweep(load_spec_text(SQRT_LOG, path="sqrtlog.yaml"), "x", span=(-2.0, 2.0),
                  points=41, element=(2,))
    np.testing.assert_allclose(curve.true, true, rtol=1e-12)  # NaN for x < 0, inf at 0
    np.testing.assert_allclose(curve.overridden, overridden, rtol=1e-12)  # finite but at 0
    _, bottom = curve_figure(curve).axes
    (shade,) = [c for c in bottom.collections if c.get_label() == "overridden ≠ true"]
    vertices = np.concatenate([path.vertices for path in shade.get_paths()])
    shaded = np.isfinite(true) & np.isfinite(overridden) & ~np.isclose(overridden, true)
    assert shaded.sum() == 20  # x > 0
    np.testing.assert_array_equal(np.unique(vertices[:, 0]), xs[shaded])
    # between the two lines there, and nowhere else: no edge at y = 0 or 1.8e308
    for x, y in vertices:
        i = int(np.argmin(np.abs(xs - x)))
        assert min(true[i], overridden[i]) - 1e-9 <= y <= max(true[i], overridden[i]) + 1e-9
