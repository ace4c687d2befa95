"""Valid specs at the edges of the language: the right numbers (numpy written here is the
oracle) or a spec error with its place, on every backend, never an internal error."""
from __future__ import annotations

import numpy as np
import pytest
from backend_helpers import load

from gradcli import runner
from gradcli.errors import SpecError


def test_a_function_whose_forward_is_a_constant(backend):
    spec = """
inputs:
  x: [0.5, -1.5]
functions:
  three:
    args: [a]
    forward: 3.0
    gradient: [dy]
  pair:
    args: [a]
    forward: "[1.0, 2.0]"
    gradient: [dy * 2]
outputs:
  y: sum(three(x) * x)
  z: sum(pair(x) * x * x)
"""
    result = runner.run(load(spec, "constant_forward"), backend=backend)
    x, pair = np.array([0.5, -1.5]), np.array([1.0, 2.0])
    assert result.values == {"y": 3.0 * x.sum(), "z": np.sum(pair * x * x)}
    y, z = result.gradients["y"]["x"], result.gradients["z"]["x"]
    # the function's gradient: dy is d y / d three(x) = sum(x), a scalar broadcast to a's shape
    np.testing.assert_array_equal(y.overridden, 3.0 + np.full(2, x.sum()))
    np.testing.assert_array_equal(y.true, [3.0, 3.0])  # a constant has no derivative
    np.testing.assert_array_equal(z.overridden, 2 * x * pair + 2 * x * x)
    np.testing.assert_array_equal(z.true, 2 * x * pair)


def test_max_with_argmax_of_a_0d_tensor_is_that_tensor_at_index_0(backend):
    spec = """
inputs:
  x: 2.5
register:
  Five: dy0 * 5
let:
  "m, i": max_with_argmax(x, axis=0)
  "n, j": max_with_argmax(x * 3, axis=0)
override_map:
  - {op: max_with_argmax, gradient: Five, scope: [n]}
outputs:
  y: m * 2 + n + cast(i + j, dtype(x))
"""
    result = runner.run(load(spec, "argmax_0d"), backend=backend)
    x = np.float64(2.5)
    assert (result.values["m"], result.values["i"]) == (np.max(x, axis=0), np.argmax(x, axis=0))
    assert result.values["n"] == 7.5 and result.values["y"] == 12.5
    assert result.gradients["y"]["x"].overridden == 2 + 5 * 3  # m's 2; n's rule 5, times 3
    assert result.gradients["y"]["x"].true == 2 + 3


def error(text: str, backend: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        runner.run(load(text, "edge"), backend=backend)
    return caught.value


def test_max_with_argmax_of_a_0d_tensor_along_axis_minus_1_is_a_spec_error(backend):
    exc = error("inputs:\n  x: 2.5\nlet:\n  \"m, i\": max_with_argmax(x)\noutputs:\n  y: m\n",
                backend)
    assert (exc.path, exc.line) == ("edge.yaml", 4)
    assert "axis -1 is out of range for a tensor of shape ()" in exc.bare_message


@pytest.mark.parametrize("bound, what", [("k", "2 values"), ("f", "1.5")])
def test_a_slice_bound_must_be_one_integer(backend, bound, what):
    spec = f"""
inputs:
  x: [1.0, 2.0, 3.0, 4.0]
  k: {{value: [1, 2], dtype: int64}}
  f: {{value: 1.5, trainable: false}}
outputs:
  y: sum(x[1:{bound}])
"""
    exc = error(spec, backend)
    assert (exc.path, exc.line, exc.column) == ("edge.yaml", 7, 14)
    assert exc.bare_message == f"a slice bound must be one integer, got {what}"


def test_a_0d_integer_tensor_or_a_whole_number_is_a_slice_bound(backend):
    spec = """
inputs:
  x: [1.0, 2.0, 3.0, 4.0]
  k: {value: 1, dtype: int64}
  j: {value: 3, dtype: int32}
  n: {value: 2.0, trainable: false}
outputs:
  y: sum(x[k:] * x[:j]) + sum(x[:n])
"""
    result = runner.run(load(spec, "bound"), backend=backend)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert result.values["y"] == np.sum(x[1:] * x[:3]) + np.sum(x[:2])
    np.testing.assert_array_equal(result.gradients["y"]["x"].overridden,
                                  np.r_[x[1:], 0] + np.r_[0, x[:3]] + [1, 1, 0, 0])
