"""--output never replaces a file the spec reads (its `load:` data), nor hangs on a FIFO nobody reads."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

LOADS = """\
name: ld
inputs:
  x: {load: d.npz, key: X}
outputs:
  y: sum(x * x)
"""


def loading_spec(tmp_path) -> tuple:
    data = tmp_path / "d.npz"
    np.savez(data, X=np.array([1.0, 2.0, 3.0]))
    spec = tmp_path / "ld.yaml"
    spec.write_text(LOADS)
    return spec, data


@pytest.mark.parametrize("command", ["run", "report"])
@pytest.mark.parametrize("link", ["same", "hardlink", "symlink"])
def test_output_that_is_a_loaded_file_is_refused_and_kept(tmp_path, command, link):
    spec, data = loading_spec(tmp_path)
    before = data.read_bytes()
    target = data
    if link != "same":
        target = tmp_path / "other.npz"
        (os.link if link == "hardlink" else os.symlink)(data, target)
    result = CliRunner().invoke(cli, [command, str(spec), "--output", str(target)])
    assert result.exit_code == 2, result.output
    assert "is the file input 'x' of the spec loads" in " ".join(result.output.split())
    assert data.read_bytes() == before
    np.testing.assert_array_equal(np.load(data)["X"], [1.0, 2.0, 3.0])


def test_output_to_a_fifo_nobody_reads_is_refused_at_once(tmp_path):
    spec = tmp_path / "ok.yaml"
    spec.write_text("inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n")
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(spec), "--output",
                           str(fifo)], capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 2, done.stderr
    assert "no process is reading the FIFO" in " ".join(done.stderr.split())


def test_a_good_spec_run_before_does_not_get_the_loaded_file_written(tmp_path):
    spec, data = loading_spec(tmp_path)
    good = tmp_path / "ok.yaml"
    good.write_text("inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n")
    before = data.read_bytes()
    result = CliRunner().invoke(cli, ["run", str(good), str(spec), "--output", str(data)])
    assert result.exit_code == 2, result.output
    assert data.read_bytes() == before
