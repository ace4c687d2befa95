"""A spec that fails to load, given alone to `run --format json|csv|markdown`, still gives the
tool a document: the same error entry a spec of several gets ({"path", "error", "exit_code"}),
and exit 2."""
import csv
import io
import json

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

BAD = "inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sine(x)\n"  # no op `sine`


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    return str(path)


def test_json_of_one_bad_spec_is_its_error_document(bad):
    result = invoke("run", bad, "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc == {"path": bad, "error": doc["error"], "exit_code": 2}
    assert doc["error"].startswith(f"{bad}:4:6") and "sine" in doc["error"]
    assert "sine" in result.stderr  # people still read it there


def test_json_of_one_missing_spec_is_its_error_document(tmp_path):
    missing = str(tmp_path / "missing.yaml")
    result = invoke("run", missing, "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["path"] == missing and doc["exit_code"] == 2 and "does not exist" in doc["error"]


def test_json_of_several_bad_specs_is_the_list_of_their_errors(bad, tmp_path):
    missing = str(tmp_path / "missing.yaml")
    result = invoke("run", bad, missing, "--format", "json")
    assert result.exit_code == 2
    assert [d["path"] for d in json.loads(result.stdout)] == [bad, missing]


def test_csv_and_markdown_of_one_bad_spec_carry_the_error(bad):
    table = invoke("run", bad, "--format", "csv")
    assert table.exit_code == 2
    rows = list(csv.reader(io.StringIO(table.stdout)))
    errors = {row[6]: row[-1] for row in rows[1:] if row[2] == "error"}
    assert errors["exit_code"] == "2" and "sine" in errors["error"]
    markdown = invoke("run", bad, "--format", "markdown")
    assert markdown.exit_code == 2
    assert markdown.stdout.startswith(f"## {bad}\n\nerror: {bad}:4:6")


def test_json_output_file_of_one_bad_spec_holds_its_error(bad, tmp_path):
    target = tmp_path / "out.json"
    result = invoke("run", bad, "--format", "json", "--output", str(target))
    assert result.exit_code == 2 and result.stdout == ""
    assert json.loads(target.read_text())["path"] == bad


# ----- compare: it needs every run, but a tool format still gets the errors -----
GOOD = "inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n"
BIG = "inputs:\n  x: {normal: [0, 1], shape: [100000]}\noutputs:\n  y: sum(x * x)\n"


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.yaml"
    path.write_text(GOOD)
    return str(path)


def test_compare_json_with_a_bad_spec_is_its_error_document(good, bad):
    result = invoke("compare", good, bad, "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc == {"path": bad, "error": doc["error"], "exit_code": 2}
    assert doc["error"].startswith(f"{bad}:4:6") and "sine" in doc["error"]
    assert "compare needs every run; 1 of 2 failed" in result.stderr


def test_compare_json_of_runs_that_fail_lists_each_at_its_spec(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text(BIG)  # loads, but each run exceeds the memory budget
    result = invoke("compare", str(big), "--backends", "numpy,torch", "--max-memory", "100KiB",
                    "--format", "json")
    assert result.exit_code == 2
    docs = json.loads(result.stdout)
    assert [d["path"] for d in docs] == [str(big)] * 2 and {d["exit_code"] for d in docs} == {2}
    assert [d["error"].split(":")[0] for d in docs] == ["numpy", "torch"]  # which run failed
    assert all("memory budget" in d["error"] for d in docs)


def test_compare_csv_and_markdown_with_a_bad_spec_carry_the_error(good, bad):
    table = invoke("compare", good, bad, "--format", "csv")
    assert table.exit_code == 2
    rows = list(csv.reader(io.StringIO(table.stdout)))
    assert rows[0][:3] == ["experiment", "backend", "section"]
    errors = {row[6]: row[-1] for row in rows[1:] if row[2] == "error"}
    assert {row[0] for row in rows[1:]} == {bad}
    assert errors["exit_code"] == "2" and errors["error"].startswith(f"{bad}:4:6")
    markdown = invoke("compare", good, bad, "--format", "markdown")
    assert markdown.exit_code == 2
    assert markdown.stdout.startswith(f"## {bad}\n\nerror: {bad}:4:6")


def test_compare_table_or_output_file_with_a_bad_spec_writes_nothing(good, bad, tmp_path):
    assert invoke("compare", good, bad).stdout == ""
    target = tmp_path / "out.json"
    target.write_text("before")
    result = invoke("compare", good, bad, "--format", "json", "--output", str(target))
    assert result.exit_code == 2 and result.stdout == "" and target.read_text() == "before"
