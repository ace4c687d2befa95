"""Fixtures shared by the CLI tests."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}


@pytest.fixture
def run_compare(tmp_path):
    """run_compare({name: spec text}, *args) -> the click Result of `gradcli compare` on the
    specs, written to tmp_path as <name>.yaml, with --tolerance 1e-6 and then args."""
    def _run(texts: dict, *extra):
        paths = []
        for name, text in texts.items():
            path = tmp_path / f"{name}.yaml"
            path.write_text(text)
            paths.append(str(path))
        return CliRunner().invoke(cli, ["compare", *paths, "--tolerance", "1e-6", *extra],
                                  env=ENV)
    return _run
