"""--output writes what open(path, "w") would, never replaces what it should not, and
fails with a sentence (exit 2); stdout on a full disk and Ctrl-C end cleanly too."""
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fifo_reader import fifo_reader

import gradcli
from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
STE = str(ROOT / "experiments" / "ste_sign_quantize_grad.yaml")
# Subprocesses run the gradcli these tests imported, wherever the current directory is.
ENV = {**os.environ, "PYTHONPATH": str(Path(gradcli.__file__).parent.parent)}


def run_json(target, *extra):
    return CliRunner().invoke(cli, ["run", STE, "--format", "json", "--output", str(target), *extra])


def assert_clear_error(result, phrase):
    assert result.exit_code == 2, result.stdout + result.stderr
    assert phrase in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_device_is_written_in_place_not_replaced(tmp_path):
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # our own /dev/null
    result = run_json(null)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with fifo_reader(fifo) as received:
        result = run_json(fifo)
        assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(received[0])["values"]["y"] == 12.0


def test_a_symlink_is_followed(tmp_path):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    assert run_json(link).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["values"]["y"] == 12.0


def test_a_read_only_file_is_refused_even_for_root(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("precious")
    target.chmod(0o444)
    assert_clear_error(run_json(target), "is read-only")
    assert target.read_text() == "precious" and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_the_spec_being_run_is_never_the_output(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(Path(STE).read_text())
    link, hard = tmp_path / "alias.yaml", tmp_path / "hard.yaml"
    link.symlink_to(spec)
    os.link(spec, hard)
    for target in (spec, link, hard):
        result = CliRunner().invoke(cli, ["run", str(spec), "--format", "json", "--output", str(target)])
        assert_clear_error(result, "is the spec being run")
    assert spec.read_text() == Path(STE).read_text()


def test_a_new_file_gets_the_umask_mode_and_a_replaced_file_keeps_its_mode(tmp_path):
    old_mask = os.umask(0o027)
    try:
        new = tmp_path / "new.json"
        assert run_json(new).exit_code == 0
        assert stat.S_IMODE(new.stat().st_mode) == 0o640  # 0o666 & ~0o027, as open() makes it
    finally:
        os.umask(old_mask)
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o664)
    assert run_json(kept).exit_code == 0
    assert stat.S_IMODE(kept.stat().st_mode) == 0o664
    assert json.loads(kept.read_text())["name"] == "ste-sign-quantize-grad"


@pytest.mark.parametrize("target, phrase", [
    ("", "the file name is empty"),
    ("/proc/gradcli-out.json", "cannot create files in /proc"),
    ("{tmp}", "is a directory"),
    ("{tmp}/file.txt/out.json", "Not a directory"),
    ("/dev/full", "cannot write: No space left on device"),
])
def test_unwritable_targets_are_clear_errors(tmp_path, target, phrase):
    (tmp_path / "file.txt").write_text("x")
    assert_clear_error(run_json(target.format(tmp=tmp_path)), phrase)


def test_stdout_on_a_full_disk_is_a_clear_error(tmp_path):
    for fmt in ("json", "table"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "gradcli", "run", STE, "--format", fmt],
                                  stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=ENV)
        assert proc.returncode == 2, proc.stderr
        assert "error: cannot write to standard output: No space left on device" in proc.stderr
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def wait_until_loading_specs(proc, timeout=60):
    """Until PyYAML's C parser is mapped into proc: gradcli imports it only to load a spec,
    so the command is running and its Ctrl-C handling is in place (a loaded machine may
    take seconds to import before that)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if "_yaml" in Path(f"/proc/{proc.pid}/maps").read_text():
            return
        time.sleep(0.05)


def sigint_not_ignored():
    """A shell starts background jobs with SIGINT ignored, and an ignored signal stays ignored
    across exec (Python then installs no KeyboardInterrupt handler in the child). A handled
    one is reset to the default, so handle it here while the child starts."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


LONG = ("inputs:\n  w: {normal: [0, 1], shape: [300000]}\noutputs:\n  loss: sum(w * w)\n"
        "train:\n  loss: loss\n  optimizer: {name: sgd, lr: 0.0001}\n  steps: 100000\n")


def test_ctrl_c_exits_130_and_leaves_no_output_file(tmp_path):
    spec = tmp_path / "long.yaml"
    spec.write_text(LONG)
    target = tmp_path / "out.json"
    target.write_text("before")
    sigint_not_ignored()
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", "run", str(spec), "--format", "json",
                             "--output", str(target)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=ENV)
    wait_until_loading_specs(proc)
    time.sleep(1)  # training under way (it would take far longer than this)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert stdout == ""
    assert target.read_text() == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.yaml", "out.json"]


@pytest.mark.parametrize("command,to_file", [("run", True), ("run", False), ("compare", True),
                                             ("compare", False)])
def test_sigterm_exits_143_with_one_line_and_writes_nothing(tmp_path, command, to_file):
    """SIGTERM (`timeout`, a CI cancel) as sweep takes it: "terminated" on stderr, exit 143,
    no document on stdout and the --output file as it was (it used to end silently, -15)."""
    spec = tmp_path / "long.yaml"
    spec.write_text(LONG)
    target = tmp_path / "out.json"
    target.write_text("before")
    specs = [str(spec)] * (2 if command == "compare" else 1)
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", command, *specs, "--format", "json",
                             *(["--output", str(target)] if to_file else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=ENV)
    try:
        wait_until_loading_specs(proc)  # the handler is set before the first spec loads
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()  # a no-op once it has ended
    assert proc.returncode == 143, stderr
    assert stderr == "terminated\n" and stdout == ""
    assert target.read_text() == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.yaml", "out.json"]


def test_a_closed_pipe_ends_quietly_like_sigpipe(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", "run", STE, "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=ENV)
    proc.stdout.close()  # the reader is gone before gradcli writes (`gradcli run ... | head -0`)
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 141, stderr
    assert stderr == ""


def test_a_command_run_in_process_gives_sigterm_its_handler_back():
    before = signal.getsignal(signal.SIGTERM)
    assert CliRunner().invoke(cli, ["run", STE, "--format", "json"]).exit_code == 0
    assert signal.getsignal(signal.SIGTERM) is before
