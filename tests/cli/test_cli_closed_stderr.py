"""stderr's reader going away (`gradcli run bad.yaml 2>&1 | head -1`) ends gradcli as a closed
stdout does, with 141 (128 + SIGPIPE): never 1, which would read as "an expect was not met"."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gradcli

ENV = {**os.environ, "PYTHONPATH": str(Path(gradcli.__file__).parent.parent), "NO_COLOR": "1"}
BAD = "inputs:\n  W: {normal: [0, 1], shape: [2, 2]}\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(W @ x)\n"
GOOD = "inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n"


def exit_code_with_stderr_closed(args: list, cwd: Path) -> tuple[int, str]:
    """The exit code with stderr a pipe whose reader is gone before gradcli starts (so every
    write to stderr fails, deterministically), and what stdout got."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "gradcli", *args], stdout=subprocess.PIPE,
                              stderr=write_end, text=True, cwd=cwd, env=ENV, timeout=120)
    finally:
        os.close(write_end)
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("extra", [["-q"], [], ["--format", "json"], ["--debug"]])
def test_a_bad_spec_with_stderr_closed_exits_141(tmp_path, extra):
    (tmp_path / "bad.yaml").write_text(BAD)
    code, _ = exit_code_with_stderr_closed(["run", "bad.yaml", *extra], tmp_path)
    assert code == 141


def test_compare_with_stderr_closed_exits_141(tmp_path):
    # the error is said twice: beside the spec, then "compare needs every run"
    (tmp_path / "good.yaml").write_text(GOOD)
    code, stdout = exit_code_with_stderr_closed(["compare", "good.yaml", "missing.yaml"], tmp_path)
    assert code == 141 and stdout == ""


def test_stderr_closed_but_nothing_to_say_is_no_failure(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    code, stdout = exit_code_with_stderr_closed(["run", "good.yaml", "--format", "json"], tmp_path)
    assert code == 0 and '"y"' in stdout


def test_debug_with_stderr_open_still_shows_the_traceback_and_exits_1(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "bad.yaml", "--debug"],
                          capture_output=True, text=True, cwd=tmp_path, env=ENV, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("Traceback (most recent call last):")
    assert "\ngradcli.errors.SpecError: bad.yaml:5:12: matmul() failed" in proc.stderr


def test_compare_debug_with_stderr_closed_exits_141(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    code, stdout = exit_code_with_stderr_closed(["compare", "good.yaml", "missing.yaml",
                                                 "--debug"], tmp_path)
    assert code == 141 and stdout == ""


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_a_usage_error_raised_in_a_command_is_still_clicks_with_or_without_debug(debug):
    import click
    from click.testing import CliRunner

    from gradcli.cli_common import reports_errors

    @click.command()
    @reports_errors
    def command():
        raise click.UsageError("no such thing")

    result = CliRunner().invoke(command, debug)
    assert result.exit_code == 2 and "Error: no such thing" in result.stderr
    assert "Traceback" not in result.stderr
