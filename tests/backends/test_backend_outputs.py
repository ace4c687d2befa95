"""Each output's gradients are its own (no NaN leaks in from another output's inf), and the
numeric gradient's kind is what the backend did, for a let as for an input."""
from __future__ import annotations

import numpy as np
from backend_helpers import load

from gradcli import runner

X, W = [0.0, 1.0, 4.0, 0.5], [2.0, -1.0, 0.5, 3.0]
SEPARATE = f"""
inputs:
  x: {X}
  w: {W}
outputs:
  rooted: sum(sqrt(x) * w)
  squared: sum(x * x * w)
  shifted: sum(sqrt(x - 1.0))
"""


def test_an_infinite_gradient_stays_in_its_own_output(backend):
    result = runner.run(load(SEPARATE, "separate"), backend=backend, numeric=False)
    x, w = np.array(X), np.array(W)
    with np.errstate(all="ignore"):
        root = 0.5 / np.sqrt(x) * w        # inf where x = 0
        shifted = 0.5 / np.sqrt(x - 1.0)   # NaN where x < 1, inf at 1
    for kind in ("overridden", "true"):
        got = {o: row["x"] for o, row in result.gradients.items()}
        np.testing.assert_array_equal(getattr(got["squared"], kind), 2 * x * w)
        np.testing.assert_array_equal(getattr(result.gradients["squared"]["w"], kind), x * x)
        np.testing.assert_allclose(getattr(got["rooted"], kind), root, rtol=1e-15)
        np.testing.assert_allclose(getattr(got["shifted"], kind), shifted, rtol=1e-15)


def test_a_large_let_is_checked_along_directions_and_says_so(backend):
    spec = """
seed: 4
inputs:
  x: {uniform: [-1, 1], shape: [3000]}
  v: {uniform: [-1, 1], shape: [5]}
let:
  h: x * 2
  k: v * 3
outputs:
  y: sum(sin(h)) + sum(k * k)
wrt: [h, k, x]
"""
    result = runner.run(load(spec, "large_let"), backend=backend)
    kinds = {n: row.numeric_kind for n, row in result.gradients["y"].items()}
    assert kinds == {"h": "directional", "k": "full", "x": "directional"}
    for name in ("h", "k", "x"):
        assert result.summary["y"][name].numeric_max_abs_diff < 1e-6, name
    h = np.asarray(result.values["h"])
    np.testing.assert_allclose(result.gradients["y"]["h"].true, np.cos(h), rtol=1e-12)
