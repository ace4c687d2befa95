"""Arguments a person can get wrong: a backend's name, an --output folder that does not exist."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

STE = str(Path(__file__).parents[2] / "experiments" / "ste_sign_quantize_grad.yaml")


@pytest.mark.parametrize("args", [["run", STE, "--backend", "torhc"],
                                  ["compare", STE, "--backends", "numpy,torhc"]])
def test_a_misspelt_backend_is_refused_with_a_hint_before_anything_runs(args):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "unknown backend 'torhc' (did you mean 'torch'?)" in result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr


def test_output_into_a_missing_folder_is_refused_and_creates_nothing(tmp_path):
    target = tmp_path / "newdir" / "x.txt"
    result = CliRunner().invoke(cli, ["run", STE, "--output", str(target)])
    assert result.exit_code == 2
    assert f"the folder {tmp_path / 'newdir'} does not exist" in result.stderr
    assert not (tmp_path / "newdir").exists()


@pytest.mark.parametrize("args", [["run", STE, "--format", "json", "--backend", "nope"],
                                  ["run", STE, "--backend", "nope", "--format", "json"],
                                  ["run", STE, "--format", "json", "--max-memory", "lots"],
                                  ["run", STE, "--format", "json", "--no-such-flag"],
                                  ["run", STE, "--format", "json", "--output", "missing/x.json"],
                                  ["compare", STE, STE, "--format", "json", "--tolerance", "-1"],
                                  ["compare", STE, STE, "--format", "json", "--tolerance", "lots"],
                                  ["compare", STE, "--format", "csv", "--backends", "numpy"]])
def test_an_error_about_the_command_under_a_tool_format_is_stderr_only(args, tmp_path,
                                                                         monkeypatch):
    """docs/spec.md: a usage error or bad flag is one convention with every command-level
    error: plain text on stderr, exit 2, stdout empty, whatever --format (only a spec that
    cannot load or run becomes an entry of the document, as the last test shows)."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() and "Traceback" not in result.stderr
    assert not list(tmp_path.iterdir())


def test_a_spec_that_cannot_load_is_the_documents_entry(tmp_path):
    missing = str(tmp_path / "missing.yaml")
    result = CliRunner().invoke(cli, ["run", missing, "--format", "json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "path": missing, "error": f"{missing}: the spec file {missing!r} does not exist",
        "exit_code": 2}
