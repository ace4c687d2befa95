"""With `unconnected: zero`, the numeric gradient of an input nothing depends on is zeros, as
its finite difference is (it was null beside numeric_kind "full"); with `none` it stays null."""
from __future__ import annotations

import numpy as np
from backend_helpers import load

from gradcli import runner

SPEC = """
inputs:
  x: [1.0, 2.0]
  u: [5.0, -6.0, 0.5]
outputs:
  y: sum(x * x * 3.0)
wrt: [x, u]
unconnected: {mode}
"""


def forward(x, u):
    return float(np.sum(x * x * 3.0))  # the spec's y, written here; u does not enter it


def central_difference(f, at: np.ndarray, h: float = 1e-5) -> np.ndarray:
    out = np.zeros_like(at)
    for i in range(at.size):
        up, down = at.copy(), at.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


def test_an_input_nothing_depends_on_has_a_zero_numeric_gradient(backend):
    x, u = np.array([1.0, 2.0]), np.array([5.0, -6.0, 0.5])
    expected = central_difference(lambda v: forward(x, v), u)
    result = runner.run(load(SPEC.format(mode="zero"), "zero"), backend=backend)
    row = result.gradients["y"]["u"]
    assert row.numeric_kind == "full"
    np.testing.assert_array_equal(row.numeric, expected)  # exactly 0.0 each
    assert result.summary["y"]["u"].numeric_max_abs_diff == 0.0
    np.testing.assert_allclose(result.gradients["y"]["x"].numeric,
                               central_difference(lambda v: forward(v, u), x), rtol=1e-6)
    result = runner.run(load(SPEC.format(mode="none"), "none"), backend=backend)
    assert result.gradients["y"]["u"].numeric is None
