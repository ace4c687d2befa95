"""sweep --out's files get the mode a plain open() gives under the umask, as --output's do
(tryout7: results.csv, sweep.json and runs/*.json were 0600 whatever the umask)."""
import os
import stat

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """\
name: sq
inputs:
  x: {uniform: [-2, 2], shape: [3]}
outputs:
  y: sum(x * x)
sweep:
  seed: [0, 1]
"""


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_sweep_files_follow_the_umask_as_open_does(tmp_path, mask):
    (tmp_path / "sq.yaml").write_text(SPEC)
    previous = os.umask(mask)
    try:
        out = tmp_path / "out"
        result = CliRunner().invoke(cli, ["sweep", str(tmp_path / "sq.yaml"), "--jobs", "1",
                                          "--out", str(out)])
        with open(tmp_path / "plain.txt", "w") as handle:  # the oracle: what open() makes
            handle.write("x")
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    expected = stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.relative_to(out).as_posix() for p in files} == {
        "sweep.json", "results.csv", "runs/0.json", "runs/1.json"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == \
        {p.name: expected for p in files}
