"""grad_ys must have its output's shape or be a scalar: one check, the same placed error on
every backend, whether or not stop_gradients cuts the path (numpy used to accept it when cut
and name an internal op otherwise)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

X = [1.0, 2.0]


def spec(grad_ys: str, stopped: bool) -> str:
    return (f"inputs: {{x: {X}}}\n"
            "let:\n  c: x * 2\n"
            "outputs:\n  z: sum(c * x)\n  v: x * x\n"
            f"grad_ys:\n{grad_ys}"
            + ("stop_gradients: [c]\n" if stopped else ""))


@pytest.mark.parametrize("stopped", [True, False], ids=["stopped", "connected"])
def test_a_wrong_grad_ys_shape_is_the_same_placed_error_everywhere(backend, stopped):
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(spec("  z: [3.0]\n", stopped), path="spec.yaml"),
                   backend=backend, numeric=False)
    assert str(info.value).startswith(
        "spec.yaml:8:6: grad_ys.z: grad_ys for output 'z' has shape (1,); it must have the "
        "output's shape () or be a scalar")
    assert info.value.exit_code == 2


def test_a_vector_grad_ys_of_the_wrong_length_names_its_output(backend):
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(spec("  v: [1.0, 2.0, 3.0]\n", False), path="spec.yaml"),
                   backend=backend, numeric=False)
    assert "grad_ys for output 'v' has shape (3,); it must have the output's shape (2,)" \
        in str(info.value)


def test_a_scalar_or_same_shape_grad_ys_weights_the_gradient(backend):
    result = runner.run(load_spec_text(spec("  z: 3.0\n  v: 0.5\n", False), path="spec.yaml"),
                        backend=backend, numeric=False)
    x = np.array(X)
    # z = sum(2 x * x): dz/dx = 4 x, times 3; v = x * x: dv/dx = 2 x, times 0.5 (numpy by hand)
    np.testing.assert_allclose(result.gradients["z"]["x"].overridden, 3.0 * 4 * x, rtol=1e-12)
    np.testing.assert_allclose(result.gradients["v"]["x"].overridden, 0.5 * 2 * x, rtol=1e-12)
    result = runner.run(load_spec_text(spec("  v: [1.0, 4.0]\n", True), path="spec.yaml"),
                        backend=backend, numeric=False)
    np.testing.assert_allclose(result.gradients["v"]["x"].overridden, np.array([1.0, 4.0]) * 2 * x,
                               rtol=1e-12)
