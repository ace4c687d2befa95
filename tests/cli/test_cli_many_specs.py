"""Several specs in one command: every one runs, each failure beside its spec, worst exit code."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
GOOD = "name: {name}\ninputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n"
CHECKED = GOOD + "expect:\n  values: {{y: {y}}}\n"
BAD = "inputs:\n  x: 1.0\noutputs:\n  y: sine(x)\n"


def invoke(*args):
    return CliRunner().invoke(cli, list(args), env=ENV)


@pytest.fixture
def specs(tmp_path):
    def write(name, text):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text.format(name=name, y=5.0 if name != "wrong" else 6.0))
        return str(path)
    return write


def test_a_bad_spec_does_not_silence_the_good_ones(specs):
    a, bad, c = specs("a", CHECKED), specs("bad", BAD), specs("c", GOOD)
    table = invoke("run", a, bad, c)
    assert table.exit_code == 2
    assert table.stdout.count("expect: passed") == 1 and "│ c" in table.stdout
    assert f"error: {bad}:4:" in table.stderr and "sine" in table.stderr
    doc = json.loads(invoke("run", a, bad, c, "--format", "json").stdout)
    assert [d.get("name") for d in doc] == ["a", None, "c"]
    assert doc[1]["path"] == bad and doc[1]["exit_code"] == 2 and "sine" in doc[1]["error"]
    assert doc[0]["values"]["y"] == 5.0 and doc[2]["values"]["y"] == 5.0
    csv_lines = invoke("run", a, bad, c, "--format", "csv").stdout.splitlines()
    assert list(dict.fromkeys(line.split(",")[0] for line in csv_lines[1:])) == ["a", bad, "c"]
    assert f"{bad},,error,,,,exit_code,,2" in csv_lines


@pytest.mark.parametrize("order, code", [(("wrong", "bad"), 2), (("bad", "wrong"), 2),
                                         (("wrong", "a"), 1), (("a", "c"), 0)])
def test_the_exit_code_is_the_worst(specs, order, code):
    paths = [specs(n, BAD if n == "bad" else CHECKED) for n in order]
    assert invoke("run", *paths).exit_code == code


def test_a_bad_output_file_for_one_spec_still_writes_the_others(specs, tmp_path):
    a, bad = specs("a", CHECKED), specs("bad", BAD)
    target = tmp_path / "out.md"
    result = invoke("run", a, bad, "--format", "markdown", "--output", str(target))
    assert result.exit_code == 2
    text = target.read_text()
    assert "## a" in text and f"## {bad}" in text and "sine" in text


def test_check_checks_every_spec(specs):
    a, bad, c = specs("a", CHECKED), specs("bad", BAD), specs("c", GOOD)
    result = invoke("check", a, bad, c)
    assert result.exit_code == 2
    assert result.stdout.count("ok ") == 2 and "(c)" in result.stdout
    assert "sine" in result.stderr


def test_compare_says_which_specs_failed(specs):
    a, bad, c = specs("a", CHECKED), specs("bad", BAD), specs("c", GOOD)
    result = invoke("compare", a, bad, c)
    assert result.exit_code == 2
    assert f"compare needs every run; 1 of 3 failed: {bad}" in result.stderr
    assert "sine" in result.stderr


def test_quiet_says_ran_for_a_spec_with_nothing_to_check(specs):
    result = invoke("run", "-q", specs("a", CHECKED), specs("c", GOOD), specs("wrong", CHECKED))
    assert result.exit_code == 1
    assert "ran    c (no expect block)" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "1 passed, 1 failed, 1 ran (nothing to check)"


def test_quiet_counts_errors(specs):
    result = invoke("run", "-q", specs("a", CHECKED), specs("bad", BAD))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == "1 passed, 0 failed, 1 error"


def test_table_output_goes_to_the_file_as_plain_text(specs, tmp_path):
    target = tmp_path / "tables.txt"
    result = CliRunner().invoke(cli, ["run", specs("a", CHECKED), "--output", str(target)],
                                env={"FORCE_COLOR": "1", "TERM": "xterm-256color"}, color=True)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    text = target.read_text()
    assert "gradients of y" in text and "expect: passed" in text
    assert "\x1b" not in text
    assert Path(target).stat().st_size > 200


def test_a_missing_spec_or_a_folder_is_reported_beside_it_and_the_others_still_run(specs, tmp_path):
    a, c = specs("a", CHECKED), specs("c", GOOD)
    missing, folder = str(tmp_path / "missing.yaml"), str(tmp_path)
    result = invoke("run", "-q", a, missing, folder, c)
    assert result.exit_code == 2
    assert "passed a" in " ".join(result.stderr.split()) and "ran c" in " ".join(result.stderr.split())
    assert f"error: {missing}: the spec file" in result.stderr and "does not exist" in result.stderr
    assert f"error: {folder}: " in result.stderr and "is a directory" in result.stderr
    assert "1 passed, 0 failed, 1 ran (nothing to check), 2 errors" in result.stderr
    checked = invoke("check", a, missing)
    assert checked.exit_code == 2 and "ok " in checked.stdout and "does not exist" in checked.stderr
