"""run --format json: each `conventions` entry carries `note_elements`, the flat indices of the
input's elements the note is about, as compare's rows do (note7's leftover).

Where the note holds is checked against torch's own autograd, called here: torch's sqrt
gradient is NaN exactly at the elements the note is about.
"""
import json

import numpy as np
import torch
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
SPEC = "name: g\nbackend: torch\ninputs:\n  x: {x}\noutputs:\n  y: {expr}\n"
SCALE = [2.0, 1.0]
GUARDED = "sum(where(x * {s} - 1.0 > 0, sqrt(x * {s} - 1.0), 0.0))"


def run(tmp_path, x, expr, *extra):
    path = tmp_path / "g.yaml"
    path.write_text(SPEC.format(x=x, expr=expr))
    return CliRunner().invoke(cli, ["run", str(path), "--no-numeric", *extra], env=ENV)


def torch_nan_at(x, scale) -> list:
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    u = xt * torch.tensor(scale, dtype=torch.float64) - 1.0
    torch.where(u > 0, torch.sqrt(u), torch.zeros_like(u)).sum().backward()
    return np.flatnonzero(np.isnan(xt.grad.numpy())).tolist()


def sqrt_notes(doc) -> list:
    return [c for c in doc["conventions"] if c["topic"] == "sqrt"]


def test_a_placed_note_lists_the_elements_torch_gives_nan_at(tmp_path):
    x = [[0.0, 2.5], [0.5, 1.0]]
    result = run(tmp_path, x, GUARDED.format(s=SCALE), "--format", "json")
    assert result.exit_code == 0, result.output
    (note,) = sqrt_notes(json.loads(result.stdout))
    nan_at = torch_nan_at(x, SCALE)
    assert nan_at == [0, 2, 3]  # u <= 0 at [0, 0], [1, 0], [1, 1]
    assert (note["output"], note["input"], note["note_elements"]) == ("y", "x", nan_at)


def test_past_a_reduction_every_element_counts_null_as_in_compare(tmp_path):
    x = [-1.0, 0.5]
    result = run(tmp_path, x, "sum(where(sum(x) > 0, sqrt(sum(x)), 0.0) * x)", "--format", "json")
    (note,) = sqrt_notes(json.loads(result.stdout))
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    s = xt.sum()
    (torch.where(s > 0, torch.sqrt(s), torch.zeros_like(s)) * xt).sum().backward()
    assert np.isnan(xt.grad.numpy()).all()  # the edge reaches every element through sum()
    assert note["input"] == "x" and note["note_elements"] is None


def test_every_entry_has_the_key_and_csv_and_markdown_carry_it(tmp_path):
    x = [0.0, 2.5]
    expr = GUARDED.format(s=SCALE)
    doc = json.loads(run(tmp_path, x, expr, "--format", "json").stdout)
    assert doc["conventions"] and all("note_elements" in c for c in doc["conventions"])
    assert sqrt_notes(doc)[0]["note_elements"] == torch_nan_at(x, SCALE) == [0]
    number = doc["conventions"].index(sqrt_notes(doc)[0])
    csv = run(tmp_path, x, expr, "--format", "csv").stdout.splitlines()
    assert f"g,torch,conventions,,,,note_elements,[{number}],[0]" in csv, csv
    markdown = run(tmp_path, x, expr, "--format", "markdown").stdout
    assert "| topic | text | output | input | note_elements |" in markdown
