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


@pytest.mark.parametrize("command", [["compare", STE], ["plot", "train", STE, "-o", "t.png"]])
def test_a_backend_split_off_backends_by_a_space_is_named_as_such(command, tmp_path, monkeypatch):
    """`--backends numpy, torch`: the shell passes 'torch' as a spec (tryout12)."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*command, "--backends", "numpy,", "torch"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert ("the spec file 'torch' does not exist; it is a backend split off "
            "`--backends numpy, torch` by the space after a comma: write `--backends "
            "numpy,torch` (no spaces)") in result.stderr
    three = CliRunner().invoke(cli, ["compare", STE, "--backends=numpy,", "torch,", "jax"])
    assert three.exit_code == 2
    for name in ("torch,", "jax"):
        assert (f"error: {name}: the spec file '{name}' does not exist; it is a backend split "
                "off `--backends numpy, torch, jax` by the space after a comma: write "
                "`--backends numpy,torch,jax` (no spaces)") in three.stderr


def test_a_missing_spec_named_as_a_backend_elsewhere_keeps_the_plain_message(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["compare", "torch", STE, "--backends", "numpy,torch"],
                 ["compare", STE, "--backends", "numpy", "torch"],
                 ["run", STE, "torch"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2
        assert "error: torch: the spec file 'torch' does not exist\n" in result.stderr
