"""No Python `None` in what a person reads: an unconnected gradient is "—" (run, report) or
"unconnected" (compare), a pair one compared spec does not have is "absent", and specs that
share no output/input pair are warned about.

Expected numbers are numpy written here: d sum(x*x)/dx = 2x, d sum(x**3)/dx = 3x**2.
"""
import json
import re

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

SQUARE = "name: square\ninputs:\n  x: [1.0, 2.0]\noutputs:\n  task: sum(x * x)\n"
CUBE = "name: cube\ninputs:\n  x: [1.0, 2.0]\noutputs:\n  out: sum(x * x * x)\n"
# z: nothing depends on it, so its gradients are unconnected (null in JSON)
LOOSE = "name: loose\ninputs:\n  x: [1.0, 2.0]\n  z: [5.0, 6.0]\noutputs:\n  y: sum(x * x)\n"
X = np.array([1.0, 2.0])


def invoke(*args):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"})


def spec(tmp_path, name, text):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def rows_of(table: str, label: str) -> list[list[str]]:
    """The cells of the table rows from the one starting with label to the next section."""
    lines = table.splitlines()
    start = next(k for k, line in enumerate(lines) if re.match(rf"[│|]\s*{re.escape(label)}\s", line))
    rows = []
    for line in lines[start:]:
        if not line.startswith("│"):
            break
        rows.append([c.strip() for c in line.strip("│").split("│")])
    return rows


def test_compare_of_specs_sharing_no_pair_says_absent_and_warns(tmp_path):
    square, cube = spec(tmp_path, "square", SQUARE), spec(tmp_path, "cube", CUBE)
    result = invoke("compare", square, cube, "--tolerance", "1e-6")
    assert result.exit_code == 1, result.output
    assert "None" not in result.stdout and "None" not in result.stderr
    task = rows_of(result.stdout, "task/x")
    # element 0: square's 2x, cube has no task/x, true is square's 2x
    assert task[0][1:6] == ["0", "2", "absent", "2", "—"] and task[1][1:4] == ["1", "4", ""]
    out = rows_of(result.stdout, "out/x")
    assert out[0][1:6] == ["0", "absent", "3", "absent", "—"] and out[1][1:4] == ["1", "", "12"]
    assert "warning: the compared runs share no output/input pair" in result.stderr
    # z is in one spec only: absent from the other is no unconnected gradient, so not "ok"
    both = invoke("compare", spec(tmp_path, "loose", LOOSE), square, "--tolerance", "1e-6")
    z = rows_of(both.stdout, "y/z")
    assert z[0][1:7] == ["0", "unconnected", "absent", "unconnected", "—", "DIFFERS"]
    doc = json.loads(invoke("compare", square, cube, "--format", "json").stdout)
    by = {(r["output"], r["input"]): r for r in doc["rows"]}
    assert by[("task", "x")]["present"] == [True, False]
    assert by[("out", "x")]["present"] == [False, True]
    assert by[("task", "x")]["overridden"] == [(2 * X).tolist(), None]
    assert by[("out", "x")]["overridden"] == [None, (3 * X ** 2).tolist()]


def test_compare_of_specs_sharing_a_pair_does_not_warn(tmp_path):
    square = spec(tmp_path, "square", SQUARE)
    cube = spec(tmp_path, "cube", CUBE.replace("out:", "task:"))
    result = invoke("compare", square, cube)
    assert result.exit_code == 0, result.output
    assert "share no" not in result.stderr
    assert rows_of(result.stdout, "task/x")[0][1:4] == ["0", "2", "3"]


def test_compare_shows_an_unconnected_gradient_as_such(tmp_path):
    loose = spec(tmp_path, "loose", LOOSE)
    result = invoke("compare", loose, "--backends", "numpy,torch", "--tolerance", "1e-9")
    assert result.exit_code == 0, result.output
    assert "None" not in result.stdout
    z = rows_of(result.stdout, "y/z")
    assert z[0][1:7] == ["0", "unconnected", "unconnected", "unconnected", "0", "ok"]
    assert "share no" not in result.stderr


def test_run_table_shows_no_none(tmp_path):
    loose = spec(tmp_path, "loose", LOOSE)
    result = invoke("run", loose)
    assert result.exit_code == 0, result.output
    assert "None" not in result.stdout
    z = rows_of(result.stdout, "z")
    assert z[0] == ["z", "[0]", "5", "—", "—", "—"]
    summary = rows_of(result.stdout, "y/z")
    assert summary[0] == ["y/z", *["—"] * 6]


def test_report_shows_no_none(tmp_path):
    loose = spec(tmp_path, "loose", LOOSE)
    page_file = tmp_path / "report.html"
    result = invoke("report", loose, "--output", str(page_file))
    assert result.exit_code == 0, result.output
    page = page_file.read_text(encoding="utf-8")
    assert ">None<" not in page
    assert '<td class="name">z</td><td class="name">[0]</td><td class="">5</td>' \
           '<td class="">—</td>' in page


def test_compare_csv_and_markdown_carry_absence(tmp_path):
    import csv
    import io

    square, cube = spec(tmp_path, "square", SQUARE), spec(tmp_path, "cube", CUBE)
    table = invoke("compare", square, cube, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(table.stdout)))
    present = {(r["output"], r["run"]): r["value"] for r in rows if r["kind"] == "present"}
    assert present == {("task", "1"): "false", ("out", "0"): "false"}  # only the absences
    markdown = invoke("compare", square, cube, "--format", "markdown").stdout
    assert "| `task/x` | [2.0, 4.0] | absent |" in markdown
    assert "| `out/x` | absent | [3.0, 12.0] |" in markdown
