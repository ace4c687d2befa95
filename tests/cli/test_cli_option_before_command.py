"""An option of a command written before it (`gradcli --format json run s.yaml`): gradcli
itself has only --help and --version, so the error says whose option it is and where it goes
(tryout12 3.8), exit 2; an option no command named there has keeps click's message."""
import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

STE = str(Path(__file__).parents[2] / "experiments" / "ste_sign_quantize_grad.yaml")


def error(result) -> str:
    assert result.exit_code == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr
    return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("given, command, written", [
    (["--format", "json", "run", "S"], "run", "gradcli run --format json S"),
    (["--format=json", "run", "S"], "run", "gradcli run --format=json S"),
    (["--debug", "run", "S"], "run", "gradcli run --debug S"),
    (["-q", "run", "S"], "run", "gradcli run -q S"),
    (["--debug", "--format", "json", "run", "S"], "run", "gradcli run --debug --format json S"),
    (["--tolerance", "1e-9", "compare", "S", "S"], "compare",
     "gradcli compare --tolerance 1e-9 S S"),
    (["-o", "report", "run", "S"], "run", "gradcli run -o report S"),  # 'report' is -o's value
    (["-o", "t.png", "plot", "train", "S"], "plot train", "gradcli plot train -o t.png S"),
])
def test_a_commands_option_before_the_command_says_where_it_goes(given, command, written):
    result = CliRunner().invoke(cli, [STE if word == "S" else word for word in given])
    name = given[0].split("=")[0]
    assert error(result) == (f"Error: {name} is an option of `gradcli {command}`, so it goes "
                             f"after the command: write `{written.replace('S', STE)}`")


def test_the_written_command_runs():
    hint = error(CliRunner().invoke(cli, ["--format", "json", "run", STE]))
    written = shlex.split(hint.split("write `")[1].rstrip("`"))
    result = CliRunner().invoke(cli, written[1:])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["name"] == "ste-sign-quantize-grad"


@pytest.mark.parametrize("given", [["--bogus", "run", STE], ["--debug"],
                                   ["--backend", "torch", "plot", "train", STE]])
def test_an_option_of_no_command_named_there_keeps_clicks_message(given):
    assert error(CliRunner().invoke(cli, given)) == f"Error: No such option '{given[0]}'."
