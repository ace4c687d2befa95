"""argmax and argmin on every backend against numpy called here: int64 indices, the first of
ties, the first NaN (numpy's rule; TensorFlow's own argmax skips NaN), 0-d inputs, no gradient
through the index, and combined with one_hot and a custom gradient."""
from __future__ import annotations

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner
from gradcli.errors import SpecError

X = np.array([[1.0, 3.0, 3.0, np.nan, 2.0, np.nan],
              [-np.inf, -np.inf, 0.0, np.inf, np.inf, 1.0],
              [2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
              [-0.0, 0.0, -1e308, 1e308, 5e-324, -5e-324]])

SPEC = """
dtype: float64
inputs:
  x: [[1.0, 3.0, 3.0, .nan, 2.0, .nan], [-.inf, -.inf, 0.0, .inf, .inf, 1.0],
      [2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [-0.0, 0.0, -1.0e308, 1.0e308, 5.0e-324, -5.0e-324]]
  w: [[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]]
  s: 2.5
outputs:
  hi: argmax(x)
  lo: argmin(x)
  hi0: argmax(x, axis=0)
  lo0: argmin(x, axis=-2)
  s0: argmax(s, axis=0) + argmin(s, axis=0)
  picked: sum(one_hot(argmax(w), 3) * w)
  scaled: sum(w * cast(argmin(w, axis=0), dtype(w)))
wrt: [w]
"""


def test_argmax_argmin_values_and_gradients_against_numpy(backend):
    result = runner.run(load(SPEC, "argmax"), backend=backend)
    w = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]])
    expected = {"hi": np.argmax(X, axis=-1), "lo": np.argmin(X, axis=-1),
                "hi0": np.argmax(X, axis=0), "lo0": np.argmin(X, axis=0), "s0": np.int64(0)}
    for name, want in expected.items():
        got = np.asarray(result.values[name])
        assert got.dtype == np.int64 and np.array_equal(got, want), (name, got, want)
    assert np.array_equal(expected["hi"], [3, 3, 0, 3]) and np.array_equal(expected["lo"], [3, 0, 0, 2])
    mask = np.eye(3)[np.argmax(w, axis=-1)]
    assert result.values["picked"] == pytest.approx(np.sum(mask * w))
    # the index is a constant to the gradient: d/dw sum(one_hot(argmax(w)) * w) is the mask
    np.testing.assert_array_equal(result.gradients["picked"]["w"].overridden, mask)
    np.testing.assert_array_equal(result.gradients["picked"]["w"].true, mask)
    index = np.broadcast_to(np.argmin(w, axis=0).astype(np.float64), w.shape)
    np.testing.assert_array_equal(result.gradients["scaled"]["w"].true, index)


def test_argmax_under_an_override_and_a_custom_gradient(backend):
    spec = """
inputs:
  w: [[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]]
register:
  Twice: 2 * dy
let:
  k: argmax(identity(w))
override_map:
  - {op: identity, gradient: Twice}
outputs:
  y: sum(one_hot(k, 3) * w * w)
"""
    result = runner.run(load(spec, "argmax_override"), backend=backend)
    w = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]])
    mask = np.eye(3)[np.argmax(w, axis=-1)]
    assert result.values["y"] == pytest.approx(np.sum(mask * w * w))
    np.testing.assert_allclose(result.gradients["y"]["w"].overridden, 2 * mask * w)


def test_argmax_of_a_0d_tensor_along_axis_minus_1_is_a_spec_error(backend):
    with pytest.raises(SpecError) as caught:
        runner.run(load("inputs:\n  x: 2.5\noutputs:\n  y: argmax(x)\n", "edge"), backend=backend)
    assert "axis -1 is out of range" in str(caught.value)


def test_max_with_argmax_keeps_a_nan_and_picks_the_first_on_every_backend(backend):
    # TensorFlow's own argmax skips NaN: its backend's max_with_argmax hid the NaN (3.0, 5.0)
    spec = """
inputs:
  z: [[1.0, .nan, 3.0], [2.0, 5.0, .nan], [4.0, -1.0, 4.0]]
let:
  "v, i": max_with_argmax(z, axis=1)
outputs:
  y: sum(v * [1.0, 10.0, 100.0])
  idx: i
"""
    result = runner.run(load(spec, "max_with_argmax_nan"), backend=backend)
    z = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, np.nan], [4.0, -1.0, 4.0]])
    index = np.argmax(z, axis=1)  # numpy's rule: the first NaN, the first of ties
    assert np.array_equal(index, [1, 2, 0])
    np.testing.assert_array_equal(result.values["idx"], index)
    assert np.isnan(result.values["y"])
    grad = np.zeros_like(z)
    grad[np.arange(3), index] = [1.0, 10.0, 100.0]
    np.testing.assert_array_equal(result.gradients["y"]["z"].true, grad)
