"""A bare integer number beside an integer tensor takes its dtype (docs/spec.md), on every
backend, as numpy's int64 arithmetic computes it; a fraction there is a placed spec error (a
whole float, k - 2.0, is refused as TensorFlow refuses it: test_backend_converted_numbers)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

K = [1, -2, 7]
SPEC = ("inputs:\n  k: {value: [1, -2, 7], dtype: int64}\n  x: [0.5, 1.5, -2.0]\n"
        "outputs:\n"
        "  plus: k + 2\n"
        "  times: 3 * k\n"
        "  listed: k * [2, 3, 4]\n"
        "  mixed: sum(x * cast(k + 2, dtype(x)))\n")


def test_a_whole_number_beside_int64_stays_int64(backend):
    result = runner.run(load_spec_text(SPEC, path="spec.yaml"), backend=backend, numeric=False)
    k = np.array(K, dtype=np.int64)
    want = {"plus": k + 2, "times": 3 * k, "listed": k * np.array([2, 3, 4], dtype=np.int64)}
    for name, expected in want.items():
        got = np.asarray(result.values[name])
        assert got.dtype == np.int64, (name, got.dtype)
        np.testing.assert_array_equal(got, expected)
    x = np.array([0.5, 1.5, -2.0])
    assert float(result.values["mixed"]) == float(np.sum(x * (k + 2)))
    np.testing.assert_allclose(result.gradients["mixed"]["x"].overridden, k + 2, rtol=0)


@pytest.mark.parametrize("expr, op, shown", [("k * 2.5", "mul", "2.5"),
                                              ("k + [1, 0.5, 2]", "add", "[1, 0.5, 2]")])
def test_a_fraction_beside_an_integer_tensor_is_a_placed_error(backend, expr, op, shown):
    # TensorFlow: tf.constant([1], tf.int64) * 2.5 -> "Cannot convert 2.5 to EagerTensor of
    # dtype int64"; refused as the spec loads (check too), in the words of a whole float's
    text = f"inputs:\n  k: {{value: {K}, dtype: int64}}\noutputs:\n  y: {expr}\n"
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(text, path="spec.yaml"), backend=backend, numeric=False)
    message = str(info.value)
    assert message.startswith("spec.yaml:4:")
    assert (f"{op}() of an int64 tensor and the float number {shown} is not defined, as "
            "TensorFlow converts no float number to int64") in message, message
    assert "cast the tensor first: cast(k, " in message
    assert info.value.exit_code == 2


def test_a_fraction_only_the_run_sees_is_refused_alike(backend):
    text = (f"inputs:\n  k: {{value: {K}, dtype: int64}}\n  x: [0.5, 1.5, -2.0]\nfunctions:\n"
            "  f:\n    args: [v]\n    forward: v * 2.5\n    gradient: [none]\n"
            "let:\n  r: f(k)\noutputs:\n  y: sum(x)\n")
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(text, path="spec.yaml"), backend=backend, numeric=False)
    assert ("mul() of an int64 tensor and the float number 2.5 is not defined, as TensorFlow "
            "converts no float number to int64") in str(info.value), str(info.value)
