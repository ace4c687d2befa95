"""A user-written gradient (register_gradient, custom_gradient) must have its input's shape or
be a scalar (spec-v1): any other shape is a GradientError, never summed down to fit."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import GradientError


def test_a_registered_rule_of_a_broadcastable_wrong_shape_is_an_error(gradient_name):
    name = gradient_name("Stacked")
    gc.register_gradient(name)(lambda op, grad: gc.stack([grad, grad]))  # (2, 3) for (3,)
    x = gc.constant([0.5, -1.5, 0.2], name="x")
    with gc.gradient_override_map({"Sign": name}):
        y = gc.sign(x)
    with pytest.raises(GradientError, match=fr"gradient '{name}' for op 'sign' returned shape "
                                            r"\(2, 3\) for input 0 \(x\) of shape \(3,\)"):
        gc.gradients(gc.sum(y), x)


def test_a_custom_gradient_of_a_broadcastable_wrong_shape_is_an_error():
    @gc.custom_gradient
    def doubled(x):
        return gc.sign(x), lambda dy: gc.stack([dy, dy])

    x = gc.constant([0.5, -1.5, 0.2], name="x")
    with pytest.raises(GradientError, match=r"gradient 'doubled' for op 'custom_gradient' "
                                            r"returned shape \(2, 3\) for input 0 \(x\) of "
                                            r"shape \(3,\)"):
        gc.gradients(gc.sum(doubled(x)), x)


def test_a_custom_gradient_of_another_float_dtype_names_the_function():
    @gc.custom_gradient
    def halved(x):
        return gc.sign(x), lambda dy: gc.cast(dy, "float32")

    x = gc.constant([0.5, -1.5, 0.2], name="x")
    with pytest.raises(GradientError, match=r"gradient 'halved' for op 'custom_gradient' "
                                            r"returned float32 for input 0 of dtype float64"):
        gc.gradients(gc.sum(halved(x)), x)


def test_scalars_are_broadcast_and_built_in_rules_still_undo_broadcasting(gradient_name):
    name = gradient_name("Scalar")
    gc.register_gradient(name)(lambda op, grad: gc.sum(grad) * 2.0)
    x = gc.constant([0.5, -1.5, 0.2])
    with gc.gradient_override_map({"Sign": name}):
        y = gc.sign(x)
    np.testing.assert_array_equal(gc.gradients(gc.sum(y * 3.0), x)[0].numpy(), [18.0] * 3)
    # a built-in rule (hardtanh on a broadcasting mul) is summed back to its input's shape
    w = gc.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with gc.gradient_override_map({"Mul": "hardtanh"}):
        z = x * w
    np.testing.assert_array_equal(gc.gradients(gc.sum(z), x)[0].numpy(), [2.0, 0.0, 2.0])
