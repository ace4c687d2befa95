"""gc.numeric_gradients where some output elements are NaN or infinite (review8 F1): each
output element is differenced on its own, so a NaN in y[0] = sqrt(-1) no longer makes the
derivative with respect to every other element NaN.

Oracles: numpy central differences taken here, one output element at a time (the Jacobian
column of each probed input element), with gradcli's relative step (eps ** (1/3) *
max(|x|, 0.001)); the true gradient from torch's autograd.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import gradcli as gc
from gradcli.fd import directional_projection

STEP = np.finfo(np.float64).eps ** (1 / 3)


def jacobian_by_differences(f, x: np.ndarray) -> np.ndarray:
    """J[i, j] = (f(x + h e_j)[i] - f(x - h e_j)[i]) / 2h, one output element at a time."""
    columns = []
    for j in range(x.size):
        h = STEP * max(abs(x[j]), 1e-3)
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        with np.errstate(all="ignore"):
            columns.append((f(up) - f(down)) / (up[j] - down[j]))
    return np.stack(columns, axis=1)


def torch_gradient(f, x: np.ndarray) -> np.ndarray:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    torch.sum(f(t)).backward()
    return t.grad.numpy()


X = np.array([-1.0, 0.5, 2.0])


def test_a_nan_element_leaves_the_other_elements_numeric_derivative_alone():
    x = gc.variable(X.copy(), name="x")
    (numeric,) = gc.numeric_gradients(gc.sqrt(x), [x])
    jac = jacobian_by_differences(np.sqrt, X)
    expected = np.diag(jac)  # elementwise: y[j] is the only element x[j] moves
    assert np.isnan(expected[0]) and np.isfinite(expected[1:]).all()
    np.testing.assert_allclose(numeric, expected, rtol=1e-9)  # NaN where the oracle's is
    true = torch_gradient(torch.sqrt, X)
    np.testing.assert_allclose(numeric[1:], true[1:], rtol=1e-8)
    assert np.isnan(true[0])  # and the NaN agrees with the true gradient's


@pytest.mark.parametrize("value", [-1.0, -3.0, np.nan])
def test_an_input_feeding_only_non_finite_elements_gets_nan_not_zero(value):
    # x[0] moves only y[0], NaN at both probes: its slope is unknown, not a flat 0
    xs = np.array([value, 1.0])
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.log(x) * 2.0, [x])
    expected = np.diag(jacobian_by_differences(lambda v: np.log(v) * 2.0, xs))
    assert np.isnan(numeric[0]) and np.isnan(expected[0])
    np.testing.assert_allclose(numeric[1], expected[1], rtol=1e-9)


def test_an_element_mixing_several_inputs_counts_only_where_it_is_finite():
    # y[i] = sqrt(x[i]) + sum(x * x): every y[i] depends on every x[j]; y[0] is NaN whatever
    # the probe, so the numeric derivative is that of y[1] + y[2] (the finite rows' sum)
    def f(v):
        return np.sqrt(v) + np.sum(v * v)

    x = gc.variable(X.copy(), name="x")
    (numeric,) = gc.numeric_gradients(gc.sqrt(x) + gc.sum(x * x), [x])
    with np.errstate(invalid="ignore"):
        finite_rows = np.isfinite(f(X))
    expected = jacobian_by_differences(f, X)[finite_rows].sum(axis=0)
    np.testing.assert_allclose(numeric, expected, rtol=1e-8)
    # the true gradient carries y[0]'s own derivative (2 x[j], finite for j > 0) too: the two
    # agree only where every element an input feeds is finite (docs/spec.md)
    true = torch_gradient(lambda t: torch.sqrt(t) + torch.sum(t * t), X)
    np.testing.assert_allclose(true[1:], 0.5 / np.sqrt(X[1:]) + 6 * X[1:], rtol=1e-12)


def test_an_infinite_element_in_both_probes_counts_for_nothing_and_grad_ys_weigh_the_rest():
    # exp(800) overflows to +inf at both probes of x[0]; the weights scale each element
    xs = np.array([800.0, 0.3, -0.4])
    weights = np.array([1.0, 3.0, -2.0])
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.exp(x), [x], grad_ys=[weights])
    with np.errstate(over="ignore"):
        jac = jacobian_by_differences(lambda v: weights * np.exp(v), xs)
    expected = np.diag(jac)
    assert np.isnan(numeric[0])  # moves only its own infinite element: unknown
    np.testing.assert_allclose(numeric[1:], expected[1:], rtol=1e-8)
    true = torch_gradient(lambda t: torch.tensor(weights) * torch.exp(t), xs)
    np.testing.assert_allclose(numeric[1:], true[1:], rtol=1e-8)


def test_an_element_finite_at_one_probe_only_keeps_its_nan():
    # sqrt at 0: the lower probe is NaN, the upper one finite -- not smooth, NaN as before
    x = gc.variable(np.array([0.0, 4.0]), name="x")
    (numeric,) = gc.numeric_gradients(gc.sqrt(x), [x])
    assert np.isnan(numeric[0])
    np.testing.assert_allclose(numeric[1], 0.25, rtol=1e-9)


def test_finite_outputs_are_differenced_as_the_sum_they_always_were():
    # bit for bit the old rule, (sum f(up) - sum f(down)) / (up - down), where all is finite
    xs = np.array([0.3, 1.7, 2.5])
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.sin(x) * gc.sum(x), [x])
    for j in range(3):
        h = STEP * max(abs(xs[j]), 1e-3)
        up, down = xs.copy(), xs.copy()
        up[j] += h
        down[j] -= h
        old = (float(np.sum(np.sin(up) * np.sum(up))) - float(np.sum(np.sin(down) * np.sum(down))))
        assert numeric[j] == old / (up[j] - down[j])


@pytest.mark.parametrize("bad", [np.nan, -1.0])
def test_a_directional_check_skips_the_non_finite_element_too(bad):
    # 3000 elements: a directional check; x[0] gives NaN (sqrt of NaN or of -1) at every probe
    xs = np.linspace(0.5, 2.0, 3000)
    xs[0] = bad
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.sqrt(x) * 3.0, [x])
    gradient = 1.5 / np.sqrt(np.where(np.isfinite(xs) & (xs > 0), xs, 1.0))
    gradient[0] = 0.0  # y[0] adds nothing to any slope
    want = directional_projection(gradient)
    assert np.isfinite(numeric).all()
    np.testing.assert_allclose(numeric, want, rtol=1e-6, atol=1e-6 * np.max(np.abs(want)))


def _flat_beside_nan(v):
    """y[0] = sqrt(-1) is NaN whatever the probe; y[1] = round(0.3) is finite and locally flat."""
    return np.where(v > 0, np.round(v), np.sqrt(v))


def test_a_flat_element_beside_an_always_nan_one_gets_its_own_finite_numeric():
    # note8/9: x[1] moves no element (round is flat there) while y[0] stays NaN, and got NaN;
    # its own element y[1] is finite, so its numeric is y[1]'s slope, 0
    xs = np.array([-1.0, 0.3])
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.where(x > 0, gc.round(x), gc.sqrt(x)), [x])
    with np.errstate(invalid="ignore"):
        jac = jacobian_by_differences(_flat_beside_nan, xs)
    assert np.isnan(jac[0, 0]) and jac[1, 1] == 0.0 and np.isnan(jac[0, 1])  # y[0] is NaN
    assert np.isnan(numeric[0])  # x[0]'s own element is the NaN one: unknown, as before
    assert numeric[1] == jac[1, 1]
    true = torch_gradient(lambda t: torch.where(t > 0, torch.round(t), torch.sqrt(t)), xs)
    assert np.isnan(true[0]) and true[1] == 0.0  # numeric and true now agree element by element


def test_a_sign_beside_a_nan_element_in_one_expression():
    # y = sqrt(x) * (x < 0) + sign(x): y[0] = NaN, y[1] = sign(0.3) = 1, flat
    xs = np.array([-1.0, 0.3])
    x = gc.variable(xs, name="x")
    y = gc.sqrt(x) * gc.cast(x < 0, "float64") + gc.sign(x)
    (numeric,) = gc.numeric_gradients(y, [x])
    true = torch_gradient(lambda t: torch.sqrt(t) * (t < 0).double() + torch.sign(t), xs)
    assert np.isnan(numeric[0]) and np.isnan(true[0])
    assert numeric[1] == 0.0 and true[1] == 0.0


def test_a_nan_sum_stays_nan_for_every_element():
    # one output element, NaN at every probe of every x: no element of its own is finite
    xs = np.array([-1.0, 0.5])
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.sum(gc.sqrt(x)), [x])
    with np.errstate(invalid="ignore"):
        jac = jacobian_by_differences(lambda v: np.array([np.sum(np.sqrt(v))]), xs)
    assert np.isnan(jac).all() and np.isnan(numeric).all()


def test_a_finite_element_that_no_move_changes_beside_a_nan_one_stays_unknown():
    # y = sqrt(x * [1, 0]): y[1] = sqrt(0) never moves, however far x[1] goes, so no probe
    # tells x[1]'s own elements from y[0]'s NaN; torch's true derivative there is NaN too
    xs, c = np.array([-1.0, 0.3]), np.array([1.0, 0.0])
    x = gc.variable(xs, name="x")
    (numeric,) = gc.numeric_gradients(gc.sqrt(x * c), [x])
    assert np.isnan(numeric).all()
    assert np.isnan(torch_gradient(lambda t: torch.sqrt(t * torch.tensor(c)), xs)).all()


def test_a_flat_element_in_float32_and_beside_an_infinite_one():
    # exp(800) is inf at every probe of x[0]; floor(x[1]) is flat: x[1] gets 0 (float32 too)
    for dtype in ("float32", "float64"):
        xs = np.array([800.0 if dtype == "float64" else 100.0, 0.3], dtype=dtype)
        x = gc.variable(xs, name="x")
        (numeric,) = gc.numeric_gradients(gc.where(x > 1, gc.exp(x), gc.floor(x)), [x])
        t = torch.tensor(xs.astype(np.float64), requires_grad=True)
        with torch.no_grad():
            assert torch.isinf(torch.exp(t.to(getattr(torch, dtype))))[0]
        assert np.isnan(numeric[0]) and numeric[1] == 0.0


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_non_finite_input_element_warns_nothing_and_its_numeric_is_nan(value, dtype):
    # its probes are NaN (inf - inf): numpy's RuntimeWarning reached the user's stderr (audit10)
    xs = np.array([value, 2.0], dtype=dtype)
    x = gc.variable(xs, name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (numeric,) = gc.numeric_gradients(x * 3.0, [x])
    assert np.isnan(numeric[0])
    np.testing.assert_allclose(numeric[1], 3.0, rtol=1e-3)  # d(3x)/dx by hand
