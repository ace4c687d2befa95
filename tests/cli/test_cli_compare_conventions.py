"""compare: a backend's convention note sits only on the rows whose path goes through its op,
and a row it excuses says so, so that the JSON verdict agrees with its rows."""
import json

import numpy as np
import torch
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
SQRT_WHERE = """
name: sqrt-where
inputs: {x: [0.0, 1.0, 4.0]}
outputs:
  y: sum(where(x > 0, sqrt(x), 0))
  r: sum(where(x > 0, 1 / x, 0))
  q: sum(where(x > 0, reciprocal(x), 0))
  l: sum(where(x > 0, log(x), 0))
  e: sum(where(x > 0, x ** 0.5, 0))
"""
X = np.array([0.0, 1.0, 4.0])


def torch_gradient(fn) -> np.ndarray:
    x = torch.tensor(X, requires_grad=True)
    torch.where(x > 0, fn(x), torch.zeros_like(x)).sum().backward()
    return x.grad.numpy()


def compare(tmp_path, fmt: str):
    spec = tmp_path / "sq.yaml"
    spec.write_text(SQRT_WHERE)
    return CliRunner().invoke(cli, ["compare", str(spec), "--backends", "numpy,torch",
                                    "--tolerance", "1e-6", "--format", fmt], env=ENV)


def test_notes_follow_the_op_and_excused_rows_say_so(tmp_path):
    result = compare(tmp_path, "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    rows = {r["output"]: r for r in doc["rows"]}
    # numpy as TensorFlow: the untaken branch gives 0; torch's own autograd gives NaN at x = 0
    for name, fn, numpy_grad in (("y", torch.sqrt, [0.0, 0.5, 0.25]),
                                 ("q", torch.reciprocal, [0.0, -1.0, -1 / 16])):
        torch_grad = torch_gradient(fn)
        assert np.isnan(torch_grad[0])
        assert rows[name]["overridden"] == [numpy_grad, ["NaN", *torch_grad[1:].tolist()]]
        assert rows[name]["within"] is False and rows[name]["excused"] is True
    assert [n.split(":")[1].strip() for n in rows["y"]["notes"]] == ["sqrt at x <= 0 or NaN"]
    assert [n.split(":")[1].strip() for n in rows["q"]["notes"]] == ["reciprocal at x = 0 or NaN"]
    for name in "rle":
        assert rows[name]["notes"] == [] and rows[name]["within"] is True
        assert rows[name]["excused"] is False
    assert doc["within_tolerance"] is all(r["within"] or r["excused"] for r in doc["rows"])


def test_the_table_states_each_note_once(tmp_path):
    result = compare(tmp_path, "table")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.count("sqrt at x <= 0") == 1 and out.count("reciprocal at x = 0") == 1
    assert "y/x: torch: sqrt at x <= 0" in out and "q/x: torch: reciprocal at x = 0" in out


def test_a_note_on_several_rows_is_listed_once_naming_them(tmp_path):
    spec = tmp_path / "two.yaml"
    spec.write_text("inputs: {x: [0.0, 1.0]}\nlet:\n  s: sum(where(x > 0, sqrt(x), 0))\n"
                    "outputs:\n  a: s\n  b: 2 * s\n")
    result = CliRunner().invoke(cli, ["compare", str(spec), "--backends", "numpy,torch",
                                      "--tolerance", "1e-6"], env=ENV)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("sqrt at x <= 0") == 1
    assert "a/x, b/x: torch: sqrt at x <= 0" in result.stdout
