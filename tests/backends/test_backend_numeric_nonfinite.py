"""The numeric column where an output element is NaN whatever the probe (review8 F1), on
every backend: the other elements' numeric derivatives stay finite, and the summary's
numeric_max_abs_diff compares them with the true gradient (it was NaN).

Oracles: numpy central differences taken here one element at a time (y = sqrt(x) moves
only y[j] when x[j] moves), and torch's autograd for the true gradient.
"""
from __future__ import annotations

import numpy as np
import pytest
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


def _projection_by_numpy(gradient: np.ndarray, seed: int, count: int = 16) -> np.ndarray:
    """The least-norm vector with the gradient's slopes along `count` seeded unit directions:
    B^T (B B^T)^-1 B g, with the directions drawn as gradcli documents them."""
    basis = np.random.default_rng(seed).standard_normal((count, gradient.size))
    basis /= np.linalg.norm(basis, axis=1, keepdims=True)
    return basis.T @ np.linalg.solve(basis @ basis.T, basis @ gradient)


def test_a_directional_check_with_a_nan_element_compares_the_finite_ones_and_says_so(backend):
    # note8/9: 3000 elements (directional); y[7] = sqrt(-1) made the true gradient's projection
    # NaN everywhere, so numeric_max_abs_diff was NaN and told nothing
    xs = np.linspace(0.5, 2.0, 3000)
    xs[7] = -1.0
    spec = (f"name: dir-nan\ninputs:\n  x: {xs.tolist()}\noutputs:\n  y: sqrt(x) * 3.0\n")
    result = runner.run(load_spec_text(spec, path="dirnan.yaml"), backend=backend)
    cell = result.gradients["y"]["x"]
    assert cell.numeric_kind == "directional"
    t = torch.tensor(xs, requires_grad=True)
    torch.sum(torch.sqrt(t) * 3.0).backward()
    true = t.grad.numpy()
    assert np.isnan(true[7]) and np.isfinite(np.delete(true, 7)).all()
    want = _projection_by_numpy(np.where(np.isfinite(true), true, 0.0),
                                result.numeric_seeds["y"]["x"])
    numeric = np.asarray(cell.numeric, dtype=np.float64)
    np.testing.assert_allclose(numeric, want, rtol=1e-5, atol=1e-6 * np.max(np.abs(want)))
    gap = result.summary["y"]["x"].numeric_max_abs_diff
    assert np.isfinite(gap) and gap == pytest.approx(np.max(np.abs(numeric - want)), rel=1e-3,
                                                     abs=1e-9)
    notes = [c for c in result.conventions if c.topic == "numeric"]
    assert len(notes) == 1 and notes[0].elements == (7,)
    assert (notes[0].output, notes[0].input) == ("y", "x") and "(at x[7])" in notes[0].text


def test_a_directional_check_without_non_finite_elements_has_no_note(backend):
    xs = np.linspace(0.5, 2.0, 2100)
    spec = f"name: dir\ninputs:\n  x: {xs.tolist()}\noutputs:\n  y: sqrt(x) * 3.0\n"
    result = runner.run(load_spec_text(spec, path="dir.yaml"), backend=backend)
    want = _projection_by_numpy(1.5 / np.sqrt(xs), result.numeric_seeds["y"]["x"])
    numeric = np.asarray(result.gradients["y"]["x"].numeric, dtype=np.float64)
    np.testing.assert_allclose(numeric, want, rtol=1e-5, atol=1e-6 * np.max(np.abs(want)))
    assert not [c for c in result.conventions if c.topic == "numeric"]
