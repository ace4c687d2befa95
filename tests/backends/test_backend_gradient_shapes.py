"""A registered or function gradient of the wrong shape is an error naming the op, the gradient
and both shapes on every backend (exit 2 from the CLI); a scalar is broadcast (spec-v1)."""
from __future__ import annotations

import numpy as np
import pytest
from backend_helpers import load
from click.testing import CliRunner

from gradcli import runner
from gradcli.cli import cli
from gradcli.errors import SpecError

X = [0.5, -1.5, 0.2]


def registered(rule: str) -> str:
    return f"""
inputs:
  x: {X}
register:
  G: "{rule}"
override_map:
  sign: G
outputs:
  y: sum(sign(x) * 3.0)
"""


def function(gradient: str) -> str:
    return f"""
inputs:
  x: {X}
functions:
  f:
    args: [a]
    forward: sign(a)
    gradient: ["{gradient}"]
outputs:
  y: sum(f(x) * 3.0)
"""


@pytest.mark.parametrize("rule, shape", [("stack([dy, dy])", r"\(2, 3\)"),
                                         ("concat([dy, dy])", r"\(6,\)"),
                                         ("reshape(dy, [1, 3])", r"\(1, 3\)")])
def test_a_registered_gradient_of_the_wrong_shape_is_an_error(backend, rule, shape):
    with pytest.raises(SpecError, match=fr"gradient 'G' for op 'sign' returned shape {shape} for "
                                        r"input 0 (\(x\) )?of shape \(3,\)"):
        runner.run(load(registered(rule), "registered"), backend=backend)


def test_a_function_gradient_of_the_wrong_shape_is_an_error(backend):
    with pytest.raises(SpecError, match=r"gradient 'f' for op 'custom_gradient' returned shape "
                                        r"\(2, 3\) for input 0 (\(x\) )?of shape \(3,\)"):
        runner.run(load(function("stack([dy, dy])"), "function"), backend=backend)


def test_a_scalar_gradient_is_broadcast(backend):
    result = runner.run(load(registered("sum(dy) + 1.0"), "scalar"), backend=backend)
    np.testing.assert_array_equal(result.gradients["y"]["x"].overridden, [10.0] * 3)  # 3 * 3 + 1
    result = runner.run(load(function("mean(dy)"), "scalar_function"), backend=backend)
    np.testing.assert_array_equal(result.gradients["y"]["x"].overridden, [3.0] * 3)


def test_the_cli_exits_2_with_a_sentence(tmp_path):
    spec = tmp_path / "wrong.yaml"
    spec.write_text(registered("stack([dy, dy])"))
    run = CliRunner().invoke(cli, ["run", str(spec)])
    assert run.exit_code == 2
    assert "returned shape (2, 3) for input 0 (x) of shape (3,)" in " ".join(run.stderr.split())
    assert "Traceback" not in run.stderr


def test_the_wrong_shape_is_placed_at_the_gradients_entry_not_the_output(backend):
    # The mistake is in register.G (or the function's gradient), line 5 of either spec; it
    # used to be placed at the output `y` that happens to use the op. The text is unchanged.
    with pytest.raises(SpecError) as info:
        runner.run(load(registered("stack([dy, dy])"), "registered"), backend=backend)
    err = info.value
    assert (err.path, err.line, err.column, err.key) == ("registered.yaml", 5, 3, "register.G")
    assert err.bare_message.startswith("the overridden gradient of output 'y': gradient 'G' for "
                                       "op 'sign' returned shape (2, 3) for input 0 ")
    with pytest.raises(SpecError) as info:
        runner.run(load(function("stack([dy, dy])"), "function"), backend=backend)
    err = info.value
    assert (err.path, err.line, err.column, err.key) == ("function.yaml", 5, 3, "functions.f")
