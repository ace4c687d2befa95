"""-o is --output's short form on every command that has --output (as -q is --quiet's)."""
import json

import click
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = "name: square\ninputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n"


def commands(group: click.Group, ctx: click.Context, prefix=()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from commands(command, ctx, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def test_every_output_option_has_o():
    ctx = click.Context(cli)
    with_output = {name: option.opts for name, command in commands(cli, ctx)
                   for option in command.params if "--output" in option.opts}
    assert {"run", "plot curve", "plot train", "plot sweep", "report", "sweep"} <= set(with_output)
    assert {name: opts for name, opts in with_output.items() if "-o" not in opts} == {}


def test_run_o_writes_the_file(tmp_path):
    spec, target = tmp_path / "square.yaml", tmp_path / "out.json"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, ["run", str(spec), "--format", "json", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    # d sum(x*x)/dx = 2x
    assert json.loads(target.read_text())["gradients"]["y"]["x"]["overridden"] == [2.0, 4.0]


def test_plot_curve_o_writes_the_figure(tmp_path):
    spec, target = tmp_path / "square.yaml", tmp_path / "c.svg"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, ["plot", "curve", str(spec), "--points", "5", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text().lstrip().startswith("<?xml")
