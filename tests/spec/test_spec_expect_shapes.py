"""An expected array for an input (its value, its overridden or true gradient, its trained
value) has the input's shape, known when the spec loads: a wrong shape is a placed error
(file, line, column, key, the shapes), exit 2, from `check` and `run` alike (note8: `run`
exited 1 with "expected shape (2,), got (3,)", and `check` said ok).

The oracle for the accepted specs: numpy computes the gradient of sum(w * x * x) by hand.
"""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

X = [1.0, 2.0, 3.0]
SPEC = """\
name: s
inputs:
  x: {x}
  w: 2.0
outputs:
  y: sum(w * x * x)
train:
  loss: y
  optimizer: {{name: sgd, lr: 0.125}}
  steps: 1
expect:
  {key}: {block}
"""


def invoke(tmp_path, key: str, block: str, command: str, *args):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC.format(x=X, key=key, block=block))
    return path, CliRunner().invoke(cli, [command, str(path), *args], env={"NO_COLOR": "1"})


WRONG = [  # (key, block, where the wrong array starts, dotted key, what, its shape)
    ("gradients", "{y: {x: [2.0, 4.0]}}", "[2.0", "expect.gradients.y.x", "gradient", "[2]"),
    ("true_gradients", "{y: {x: [[4.0, 8.0, 12.0]]}}", "[[", "expect.true_gradients.y.x",
     "gradient", "[1, 3]"),
    ("values", "{x: [1.0, 2.0, 3.0, 4.0]}", "[1.0", "expect.values.x", "value", "[4]"),
    ("train", "{params: {x: [1.0, 2.0]}}", "[1.0", "expect.train.params.x", "trained value",
     "[2]"),
    ("train", "{loss: [28.0, 7.0]}", "[28", "expect.train.loss", "", ""),  # steps: 1
]


@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize("key, block, start, dotted, what, got", WRONG)
def test_a_wrong_shape_for_an_input_is_a_placed_error_at_load(tmp_path, command, key, block,
                                                             start, dotted, what, got):
    path, result = invoke(tmp_path, key, block, command)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    line = SPEC.splitlines().index("  {key}: {block}") + 1
    column = f"  {key}: {block}".index(start) + 1
    said = (f"expected a {what} of shape [3] (the shape of input 'x'), got shape {got}" if what
            else "expected at most 1 losses (train.steps is 1), got 2")
    assert f"{path}:{line}:{column}: {dotted}: {said}" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("key, block", [
    ("gradients", "{y: {x: [2.0, 8.0, 18.0], w: 14.0}}"),  # w is a scalar input: shape ()
    ("true_gradients", "{y: {x: 4.0}}"),  # a scalar is compared with every element
    ("values", "{x: [1.0, 2.0, 3.0], w: 2.0}"),
    ("train", "{params: {x: [0.5, 1.0, 1.5]}}"),  # x - 0.125 * 2 w x, w = 2
    ("train", "{loss: [28.0]}"),  # sum(w x^2) before the step: 2 * 14
])
def test_the_right_shape_or_a_scalar_still_loads_and_is_compared_by_the_run(tmp_path, key, block):
    x = np.asarray(X)
    assert np.array_equal(2.0 * 2 * x, [4.0, 8.0, 12.0])  # d/dx sum(w x^2) = 2 w x, w = 2
    assert float(np.sum(x * x)) == 14.0  # d/dw
    _, checked = invoke(tmp_path, key, block, "check")
    assert checked.exit_code == 0, checked.output
    _, ran = invoke(tmp_path, key, block, "run", "--format", "json", "--no-numeric")
    doc = json.loads(ran.stdout)
    if key == "gradients":  # [2, 8, 18] is x * x, not 2 w x: the run, not the load, says so
        assert ran.exit_code == 1
        assert doc["expect"]["failures"][0].startswith("gradients.y.x: expected [ 2.  8. 18.]")
    elif key == "true_gradients":
        assert ran.exit_code == 1 and len(doc["expect"]["failures"]) == 1
    else:
        assert ran.exit_code == 0 and doc["expect"] == {"passed": True, "failures": [], "declared": True}
    assert np.allclose(doc["gradients"]["y"]["x"]["true"], 4.0 * x, rtol=1e-12, atol=0)


def test_a_set_that_reshapes_an_input_meets_the_expect_at_load(tmp_path):
    """--set changes the input before the spec is built: the expect written for the old shape
    is refused at its place, and the hint says how to run without it."""
    path = tmp_path / "s.yaml"
    path.write_text(SPEC.format(x=X, key="gradients", block="{y: {x: [4.0, 8.0, 12.0]}}"))
    result = CliRunner().invoke(cli, ["run", str(path), "--set", "inputs.x=[1.0, 2.0]"],
                                env={"NO_COLOR": "1"})
    assert result.exit_code == 2, result.output
    assert "expect.gradients.y.x: expected a gradient of shape [2] (the shape of input 'x'), " \
           "got shape [3]" in result.stderr
    assert "--set expect=null" in result.stderr
    fine = CliRunner().invoke(cli, ["run", str(path), "--set", "inputs.x=[1.0, 2.0]", "--set",
                                    "expect=null", "--format", "json", "--no-numeric"])
    assert fine.exit_code == 0, fine.output
    assert json.loads(fine.stdout)["gradients"]["y"]["x"]["true"] == [4.0, 8.0]  # 2 w x, w = 2
