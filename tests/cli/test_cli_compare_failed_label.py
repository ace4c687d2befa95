"""A run that fails inside `compare` is named by the label its column would have had: two
specs that keep one `name:` are `twin #0`, `twin #1` in every format (gradcli.labels), so the
failed run's error and the closing "failed:" line say `twin #1`, not the ambiguous `twin`."""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.labels import run_labels

GOOD = """name: twin
inputs:
  x: [1.0, -2.0]
  w: [[1.0], [2.0]]
outputs:
  y: sum(matmul(x, w))
"""
# w has one row where x has two elements: loads and checks, fails when the run builds matmul
BAD = GOOD.replace("[[1.0], [2.0]]", "[[1.0, 2.0, 3.0]]")


def _write(tmp_path, *texts):
    paths = []
    for k, text in enumerate(texts):
        path = tmp_path / f"s{k}.yaml"
        path.write_text(text)
        paths.append(str(path))
    return paths


def test_failed_run_is_named_by_its_column_label(tmp_path):
    paths = _write(tmp_path, GOOD, BAD)
    done = CliRunner().invoke(cli, ["compare", *paths])
    assert done.exit_code == 2, done.output
    assert f"error: twin #1: {paths[1]}:" in done.stderr
    assert "compare needs every run; 1 of 2 failed: twin #1" in done.stderr
    assert "twin #0" not in done.stderr  # the run that worked is not named


def test_failed_label_matches_the_label_a_good_run_gets(tmp_path):
    # the labels of the same pair when both run (numpy oracle for the numbers: y = x . w)
    paths = _write(tmp_path, GOOD, GOOD)
    done = CliRunner().invoke(cli, ["compare", *paths, "--format", "json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert doc["runs"] == ["twin #0", "twin #1"]
    x, w = np.array([1.0, -2.0]), np.array([[1.0], [2.0]])
    want = {"x": w[:, 0], "w": np.outer(x, np.ones(1))}  # d sum(x @ w) / dx, / dw
    for row in doc["rows"]:
        for got in row["overridden"]:
            np.testing.assert_array_equal(got, want[row["input"]])


def test_failed_run_in_a_tool_format_keeps_the_label_in_its_error(tmp_path):
    paths = _write(tmp_path, GOOD, BAD)
    done = CliRunner().invoke(cli, ["compare", *paths, "--format", "json"])
    assert done.exit_code == 2
    doc = json.loads(done.stdout)
    assert doc["path"] == paths[1]
    assert doc["error"].startswith(f"twin #1: {paths[1]}:")


def test_distinct_names_stay_plain():
    assert run_labels(["a", "b"], None) == ["a", "b"]


def test_labels_across_backends():
    assert run_labels(["twin"], ["numpy", "torch"]) == ["numpy", "torch"]
    assert run_labels(["twin", "twin"], ["numpy", "torch"]) == [
        "twin #0 [numpy]", "twin #0 [torch]", "twin #1 [numpy]", "twin #1 [torch]"]
    assert run_labels(["a", "b"], ["numpy", "torch"]) == [
        "a [numpy]", "a [torch]", "b [numpy]", "b [torch]"]
