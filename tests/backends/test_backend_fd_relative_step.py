"""The numeric column's finite-difference step is relative to |x| (gradcli.fd.estimate), so
small inputs are not probed across zero: checked against the derivative worked out with
numpy, in float32 and float64, at small and large x, on every backend."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli.core as gc
from gradcli import runner
from gradcli.fd import directional_projection
from gradcli.spec import load_spec_text

EXPR = "sum(tanh(x)*x + sqrt(x)*3)"


def analytic(x: np.ndarray) -> np.ndarray:
    """d/dx of tanh(x) x + 3 sqrt(x), by hand."""
    t = np.tanh(x)
    return t + x * (1 - t * t) + 1.5 / np.sqrt(x)


CASES = {  # dtype, inputs, relative tolerance on the numeric gradient
    "float32-small": ("float32", [0.001, 0.002, 0.01], 5e-3),
    "float64-small": ("float64", [0.001, 0.002, 0.01], 1e-7),
    "float32-large": ("float32", [150.0, 300.0, 700.0], 5e-3),
    "float64-large": ("float64", [150.0, 3.0e4, 2.0e6], 1e-6),
}


@pytest.mark.parametrize("case", CASES)
def test_numeric_column_matches_the_analytic_derivative(backend, case):
    dtype, xs, rtol = CASES[case]
    text = f"dtype: {dtype}\ninputs: {{x: {xs}}}\noutputs:\n  y: {EXPR}\n"
    result = runner.run(load_spec_text(text, path="spec.yaml"), backend=backend)
    want = analytic(np.array(xs, dtype=np.float64))
    numeric = np.asarray(result.gradients["y"]["x"].numeric, dtype=np.float64)
    np.testing.assert_allclose(numeric, want, rtol=rtol)


def test_the_core_api_uses_the_same_relative_step():
    x = gc.variable(np.array([0.001, 0.5], dtype=np.float32), name="x")
    y = gc.sum(gc.tanh(x) * x + gc.sqrt(x) * 3.0)
    [numeric] = gc.numeric_gradients(y, [x])
    np.testing.assert_allclose(numeric, analytic(np.array([0.001, 0.5])), rtol=5e-3)


def test_directional_checks_use_a_relative_step_too():
    xs = np.linspace(0.001, 0.003, 3000)  # above 2048 elements: a directional check
    x = gc.variable(xs, name="x")
    [numeric] = gc.numeric_gradients(gc.sum(gc.sqrt(x) * 3.0), [x])
    want = directional_projection(1.5 / np.sqrt(xs))
    np.testing.assert_allclose(numeric, want, rtol=1e-6, atol=1e-6 * np.max(np.abs(want)))
