"""Arguments a person can get wrong: a backend's name, an --output folder that does not exist."""
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
