"""The numeric column where an output element is NaN whatever the probe (review8 F1), on
every backend: the other elements' numeric derivatives stay finite, and the summary's
numeric_max_abs_diff compares them with the true gradient (it was NaN).

Oracles: numpy central differences taken here one element at a time (y = sqrt(x) moves
only y[j] when x[j] moves), and torch's autograd for the true gradient.
"""
from __future__ import annotations

import numpy as np
import torch

from gradcli import runner
from gradcli.spec import load_spec_text

X = np.array([-1.0, 0.5, 2.0])
SPEC = "name: nan-other\ninputs:\n  x: [-1.0, 0.5, 2.0]\noutputs:\n  y: sqrt(x) * 3.0\n"
STEP = np.finfo(np.float64).eps ** (1 / 3)


def elementwise_differences(f, x: np.ndarray) -> np.ndarray:
    """(f(x[j] + h) - f(x[j] - h)) / 2h for each element on its own, h relative to |x[j]|."""
    h = STEP * np.maximum(np.abs(x), 1e-3)
    with np.errstate(invalid="ignore"):
        return (f(x + h) - f(x - h)) / ((x + h) - (x - h))


def test_numeric_column_is_nan_only_where_its_own_element_is(backend):
    result = runner.run(load_spec_text(SPEC, path="nanother.yaml"), backend=backend)
    cell = result.gradients["y"]["x"]
    numeric = np.asarray(cell.numeric, dtype=np.float64)
    expected = elementwise_differences(lambda v: np.sqrt(v) * 3.0, X)
    assert np.isnan(expected[0]) and np.isfinite(expected[1:]).all()
    np.testing.assert_allclose(numeric, expected, rtol=1e-8)  # NaN exactly where expected's
    t = torch.tensor(X, requires_grad=True)
    torch.sum(torch.sqrt(t) * 3.0).backward()
    true = t.grad.numpy()
    np.testing.assert_allclose(np.asarray(cell.true, dtype=np.float64), true, rtol=1e-12)
    # numeric against true: NaN against NaN agrees, the rest differ by the step's error only
    gap = result.summary["y"]["x"].numeric_max_abs_diff
    assert gap is not None and np.isfinite(gap) and gap < 1e-8


FLAT = ("name: flat-beside-nan\ninputs:\n  x: [-1.0, 0.3]\noutputs:\n"
        "  y: where(x > 0, round(x), sqrt(x))\n")


def test_a_flat_element_beside_an_always_nan_one_gets_its_finite_numeric(backend):
    # note9: x[1] feeds only y[1] = round(0.3), flat, while y[0] = sqrt(-1) is NaN at every
    # probe; its numeric was NaN on every backend, so numeric_max_abs_diff was NaN
    result = runner.run(load_spec_text(FLAT, path="flat.yaml"), backend=backend)
    cell = result.gradients["y"]["x"]
    xs = np.array([-1.0, 0.3])
    t = torch.tensor(xs, requires_grad=True)
    torch.sum(torch.where(t > 0, torch.round(t), torch.sqrt(t))).backward()
    true = t.grad.numpy()
    assert np.isnan(true[0]) and true[1] == 0.0
    numeric = np.asarray(cell.numeric, dtype=np.float64)
    assert np.isnan(numeric[0]) and numeric[1] == true[1]
    assert result.summary["y"]["x"].numeric_max_abs_diff == 0.0  # NaN against NaN agrees


def test_plot_curves_numeric_series_follows_the_same_rule():
    from gradcli import curve
    # x[1] swept over [0.1, 0.4]: round(x[1]) is 0 throughout, flat, beside y[0]'s NaN
    c = curve.sweep(load_spec_text(FLAT, path="flat.yaml"), "x", span=(0.1, 0.4), points=4,
                    element=(1,))
    with np.errstate(invalid="ignore"):  # numpy: the finite element's slope, by hand
        slopes = [(np.round(v + 1e-6) - np.round(v - 1e-6)) / 2e-6 for v in c.x]
    np.testing.assert_array_equal(c.numeric, slopes)
    assert not np.isnan(c.numeric).any()
