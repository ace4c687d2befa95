"""A backend's edge note excuses a non-finite gap only at the elements it is about (review6's
leftover: torch's sqrt note at x[0] once excused an infinity at x[1]).

Each run's gradient is checked against torch's own autograd or numpy's chain rule, called
here; the verdict against where those oracles say the gaps are.
"""
import json

import numpy as np
import torch
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
SPEC = "name: {name}\nbackend: {backend}\ninputs:\n  x: {x}\noutputs:\n  y: {expr}\n"
GUARDED = "sum(where(x * 2.0 - 1.0 > 0, sqrt(x * 2.0 - 1.0), 0.0))"  # an elementwise path to x


def compare(tmp_path, specs: dict, *extra):
    paths = []
    for name, (backend, x, expr) in specs.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(SPEC.format(name=name, backend=backend, x=x, expr=expr))
        paths.append(str(path))
    result = CliRunner().invoke(cli, ["compare", *paths, "--tolerance", "1e-6", "--format", "json",
                                      *extra], env=ENV)
    return result, json.loads(result.stdout) if result.stdout.startswith("{") else None


def torch_guarded(x: list) -> np.ndarray:
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    u = xt * 2.0 - 1.0
    torch.where(u > 0, torch.sqrt(u), torch.zeros_like(u)).sum().backward()
    return xt.grad.numpy()


def as_floats(values) -> np.ndarray:
    return np.array([float(v) for v in np.ravel(values)]).reshape(np.shape(values))


def test_a_note_at_one_element_does_not_excuse_an_infinity_at_another(tmp_path):
    x = [0.0, 2.5]
    # b adds sqrt(x - 2.5), whose derivative at 2.5 is +inf, at element 1 only
    result, doc = compare(tmp_path, {
        "a": ("torch", x, GUARDED),
        "b": ("numpy", x, GUARDED[:-1] + " + where(x > 2.0, sqrt(x - 2.5), 0.0))")})
    assert result.exit_code == 1, result.output
    row = doc["rows"][0]
    a = torch_guarded(x)
    assert np.isnan(a[0]) and a[1] == 1.0 / np.sqrt(4.0)  # torch: NaN at the unchosen branch
    b = np.array([0.0, 1.0 / np.sqrt(4.0) + np.inf])     # numpy chain rule: 0 where unchosen
    np.testing.assert_array_equal(as_floats(row["overridden"][0]), a)
    np.testing.assert_array_equal(as_floats(row["overridden"][1]), b)
    assert row["note_elements"] == [[0]] and row["notes"][0].endswith("(at x[0])")
    assert row["within"] is False and row["excused"] is False and doc["within_tolerance"] is False


def test_the_same_note_still_excuses_the_gap_at_its_own_element(tmp_path):
    x = [0.0, 2.5]
    result, doc = compare(tmp_path, {"a": ("torch", x, GUARDED), "b": ("numpy", x, GUARDED)})
    assert result.exit_code == 0, result.output
    row = doc["rows"][0]
    a = torch_guarded(x)
    np.testing.assert_array_equal(as_floats(row["overridden"][0]), a)
    assert row["overridden"][1] == [0.0, a[1]]  # the numpy core: 0 where the branch is not taken
    assert row["note_elements"] == [[0]] and row["excused"] is True


def test_elements_of_a_matrix_input_follow_broadcasting_and_are_named_by_row_and_column(tmp_path):
    x = [[0.0, 2.5], [0.5, 1.0]]
    expr = "sum(where(x * [2.0, 1.0] - 1.0 > 0, sqrt(x * [2.0, 1.0] - 1.0), 0.0))"
    result, doc = compare(tmp_path, {"a": ("torch", x, expr), "b": ("numpy", x, expr)}, "--format",
                          "json")
    assert result.exit_code == 0, result.output
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    u = xt * torch.tensor([2.0, 1.0], dtype=torch.float64) - 1.0
    torch.where(u > 0, torch.sqrt(u), torch.zeros_like(u)).sum().backward()
    nan_at = np.flatnonzero(np.isnan(xt.grad.numpy()))
    row = doc["rows"][0]
    assert row["note_elements"] == [[0, 2, 3]]  # u <= 0 at [0,0], [1,0], [1,1]
    assert set(nan_at) <= {0, 2, 3} and row["notes"][0].endswith("(at x[0, 0], x[1, 0], x[1, 1])")
    assert row["excused"] is (len(nan_at) > 0)


def test_past_a_reduction_every_element_counts(tmp_path):
    """sqrt of a sum: the edge is one element of s, which every element of x feeds."""
    x = [-1.0, 0.5]
    expr = "sum(where(sum(x) > 0, sqrt(sum(x)), 0.0) * x)"
    result, doc = compare(tmp_path, {"a": ("torch", x, expr), "b": ("numpy", x, expr)})
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    s = xt.sum()
    (torch.where(s > 0, torch.sqrt(s), torch.zeros_like(s)) * xt).sum().backward()
    assert np.isnan(xt.grad.numpy()).all()  # torch's NaN reaches both elements through sum()
    row = doc["rows"][0]
    assert row["note_elements"] == [None] and row["excused"] is True and result.exit_code == 0


def test_csv_and_markdown_carry_the_note_elements(tmp_path):
    x = [0.0, 2.5]
    specs = {"a": ("torch", x, GUARDED), "b": ("numpy", x, GUARDED)}
    csv, _ = compare(tmp_path, specs, "--format", "csv")
    assert any(line.endswith(",note_elements,[0],[0]") for line in csv.stdout.splitlines()), csv.stdout
    markdown, _ = compare(tmp_path, specs, "--format", "markdown")
    assert "(at x[0])" in markdown.stdout
