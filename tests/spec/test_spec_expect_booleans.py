"""expect.values written as true/false: accepted for a boolean value, refused with a placed
error (file, line, column, key, what was expected) for any other (note7's leftover: numpy read
`{y: true}` as 1 and passed it against a float 1.0).

An input's dtype is known as the spec loads (`gradcli check` refuses); a let's or an output's
when the run makes it (`gradcli run` refuses, exit 2, the same message). The expected booleans
are the oracle's: numpy and torch compute the comparisons here.
"""
import json

import numpy as np
import torch
from click.testing import CliRunner

from gradcli.cli import cli

X = [1.0, -2.0, 0.5]
SPEC = """\
name: b
backend: {backend}
inputs:
  x: {x}
  m: {{value: [true, false, true]}}
let:
  pos: x > 0
outputs:
  y: sum(x * 0 + 1) - 2
expect:
  values: {values}
"""


def invoke(tmp_path, values: str, *args, command="run", backend="numpy"):
    path = tmp_path / "b.yaml"
    path.write_text(SPEC.format(backend=backend, x=X, values=values))
    return path, CliRunner().invoke(cli, [command, str(path), *args], env={"NO_COLOR": "1"})


def flow(items) -> str:
    return "[" + ", ".join(str(bool(v)).lower() for v in items) + "]"


def test_a_boolean_let_is_expected_as_booleans_on_numpy_and_torch(tmp_path):
    expected = np.asarray(X) > 0
    assert np.array_equal((torch.tensor(X) > 0).numpy(), expected)
    for backend in ("numpy", "torch"):
        _, ok = invoke(tmp_path, f"{{pos: {flow(expected)}}}", "--format", "json", backend=backend)
        assert ok.exit_code == 0, ok.output
        assert json.loads(ok.stdout)["values"]["pos"] == expected.tolist()
        _, wrong = invoke(tmp_path, f"{{pos: {flow(~expected)}}}", "--format", "json",
                          backend=backend)
        assert wrong.exit_code == 1 and json.loads(wrong.stdout)["expect"]["passed"] is False


def test_true_for_a_float_output_is_refused_by_the_run_with_its_place(tmp_path):
    assert float(np.sum(np.asarray(X) * 0 + 1) - 2) == 1.0  # y is 1.0: true == 1 passed before
    path, result = invoke(tmp_path, "{pos: [true, false, true], y: true}")
    assert result.exit_code == 2, result.output
    line = SPEC.splitlines().index("  values: {values}") + 1
    column = "  values: {pos: [true, false, true], y: true}".index("true}") + 1
    assert result.stderr.startswith(
        f"error: {path}:{line}:{column}: expect.values.y: expected a number, got true (a "
        "boolean): 'y' is float64, and true/false are expected only of a boolean value"), result.stderr
    assert "Traceback" not in result.output
    # check cannot know y's dtype (the run makes it); a float input it refuses as it loads
    _, checked = invoke(tmp_path, "{y: true}", command="check")
    assert checked.exit_code == 0, checked.output
    _, refused = invoke(tmp_path, "{x: [true, true, false]}", command="check")
    assert refused.exit_code == 2 and "expect.values.x: " in refused.stderr
    assert "got true (a boolean): 'x' is float64" in refused.stderr


def test_json_holds_the_refusal_where_the_run_would_be_and_a_boolean_input_is_accepted(tmp_path):
    path, result = invoke(tmp_path, "{y: [false]}", "--format", "json", backend="torch")
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["exit_code"] == 2 and doc["path"] == str(path)
    assert "expect.values.y: expected a number, got false (a boolean): 'y' is float64" in doc["error"]
    _, accepted = invoke(tmp_path, "{m: [true, false, true]}", command="check")
    assert accepted.exit_code == 0, accepted.output
