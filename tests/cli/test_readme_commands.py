"""README's "Commands" section names every option of every command (click's own list of
each command's options is the oracle)."""
from __future__ import annotations

from pathlib import Path

import click
import pytest

from gradcli.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Commands")
    return text[start:text.index("\n## ", start + 3)]


@pytest.mark.parametrize("command", ["run", "compare", "check", "sweep", "report"])
def test_every_option_of_a_command_is_in_the_readme(command):
    section = _section()
    params = cli.get_command(click.Context(cli), command).params
    options = [name for p in params if isinstance(p, click.Option)
               for name in p.opts if name.startswith("--") and name != "--help"]
    missing = [name for name in options if name not in section]
    assert not missing, f"{command}: {missing}"
