"""A sweep directory may be anyone's: its files are read as regular files only (a FIFO never
blocks, a link to a device is refused) and at most MAX_FILE_BYTES of each (never stat's
size, which is 0 for a FIFO or /dev/zero); --out never writes through a `runs` link."""
import json
import os
import shutil

import pytest
from click.testing import CliRunner
from fifo_reader import within

from gradcli.cli import cli
from gradcli.errors import GradcliError
from gradcli.sweep import results
from gradcli.sweep.results import ResultsDir, read_dir, run_doc

SPEC = "name: sw\nseed: 0\ninputs:\n  x: [1.0, -2.0]\n  c: 1.0\noutputs:\n  y: sum(x * c)\n" \
       "sweep:\n  inputs.c: [1.0, 2.0]\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    (root / "sw.yaml").write_text(SPEC)
    done = CliRunner().invoke(cli, ["sweep", str(root / "sw.yaml"), "--out",
                                    str(root / "base"), "--jobs", "1"])
    assert done.exit_code == 0, done.output
    return root


def copy(base, tmp_path, name="d"):
    shutil.copytree(base / "base", tmp_path / name)
    return tmp_path / name


@pytest.mark.parametrize("member", ["results.csv", "sweep.json"])
def test_a_fifo_in_a_sweep_directory_is_refused_without_blocking(base, tmp_path, member):
    d = copy(base, tmp_path)
    (d / member).unlink()
    os.mkfifo(d / member)
    with pytest.raises(GradcliError, match=rf"{member}: cannot read {member}: it is a named "
                                           r"pipe \(FIFO\), not a regular file"):
        within(10, lambda: read_dir(d))


@pytest.mark.parametrize("member", ["results.csv", "sweep.json"])
def test_a_link_to_a_device_is_refused_by_kind(base, tmp_path, member):
    d = copy(base, tmp_path)
    (d / member).unlink()
    (d / member).symlink_to("/dev/null")  # as /dev/zero: stat's size is 0
    with pytest.raises(GradcliError, match="it is a character device, not a regular file"):
        read_dir(d)


def test_a_file_is_read_up_to_the_limit_and_refused_past_it(base, tmp_path, monkeypatch):
    d = copy(base, tmp_path)
    limit = len((d / "sweep.json").read_bytes()) + 10
    monkeypatch.setattr(results, "MAX_FILE_BYTES", limit)
    csv = d / "results.csv"
    csv.write_bytes(csv.read_bytes().ljust(limit, b"\n"))  # blank lines: no rows
    assert len(read_dir(d).rows) == 2  # exactly the limit: read
    csv.write_bytes(csv.read_bytes() + b"\n")
    with pytest.raises(GradcliError, match="results.csv: cannot read results.csv: it is "
                                           "larger than"):
        read_dir(d)


def test_a_fifo_or_device_as_a_run_file_is_skipped(base, tmp_path):
    d = copy(base, tmp_path)
    (d / "runs" / "0.json").unlink()
    os.mkfifo(d / "runs" / "0.json")
    (d / "runs" / "1.json").unlink()
    (d / "runs" / "1.json").symlink_to("/dev/null")
    assert within(10, lambda: run_doc(d, "0")) is None
    assert run_doc(d, "1") is None
    assert within(10, lambda: read_dir(d)).rows


def test_resuming_skips_a_fifo_run_file_and_runs_it_again(base, tmp_path):
    d = copy(base, tmp_path)
    (d / "runs" / "0.json").unlink()
    os.mkfifo(d / "runs" / "0.json")
    identity = json.loads((d / "sweep.json").read_text())
    identity.pop("format")
    out = ResultsDir(d, identity)
    within(10, out.open)
    assert set(within(10, out.finished)) == {"1"}


def test_resuming_refuses_a_fifo_sweep_json(base, tmp_path):
    d = copy(base, tmp_path)
    (d / "sweep.json").unlink()
    os.mkfifo(d / "sweep.json")
    with pytest.raises(GradcliError, match="cannot read its sweep.json .it is a named pipe"):
        within(10, ResultsDir(d, {}).open)


@pytest.mark.parametrize("planted", ["link", "file"])
def test_out_refuses_a_runs_that_is_not_a_directory_inside_it(base, tmp_path, planted):
    d = tmp_path / "out"
    d.mkdir()
    shutil.copy(base / "base" / "sweep.json", d / "sweep.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if planted == "link":
        (d / "runs").symlink_to(elsewhere)
    else:
        (d / "runs").write_text("")
    done = CliRunner().invoke(cli, ["sweep", str(base / "sw.yaml"), "--out", str(d),
                                    "--jobs", "1"])
    assert done.exit_code == 2
    what = "a symlink" if planted == "link" else "not a directory"
    assert f"its runs is {what}" in done.output
    assert list(elsewhere.iterdir()) == []
