"""gradcli sweep on this machine: results directory, results.csv, the grouped report's numbers
(checked with numpy on the run files), failed runs, resuming and refusing a foreign DIR."""
import csv
import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from blobs_fixture import blobs_spec
from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
STOCHASTIC = ROOT / "experiments" / "stochastic_binarization_sweep.yaml"

# A hard-tanh STE whose clip range is an input (a value: the graph is replayed), trained.
HARDTANH = """\
name: ht
inputs:
  x: {uniform: [-2, 2], shape: [4]}
  c: {value: 1.0, trainable: false}
wrt: [x]
functions:
  bsign:
    args: [v, r]
    forward: sign(v)
    gradient:
      - where(abs(v) <= r, dy, zeros_like(dy))
      - none
outputs:
  y: sum(bsign(x, c) * x)
train:
  loss: y
  optimizer: {name: sgd, lr: 0.1}
  steps: 3
sweep:
  inputs.c.value: [0.5, 1.5]
  seed: [0, 1, 2]
"""


def invoke(*args):
    return CliRunner().invoke(cli, ["sweep", *map(str, args)])


def spec(tmp_path, text=HARDTANH, name="ht.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def run_files(out):
    return {p.stem: json.loads(p.read_text()) for p in (Path(out) / "runs").glob("*.json")}


def test_pool_writes_the_directory_and_the_report_matches_numpy_on_the_run_files(tmp_path):
    out = tmp_path / "out"
    result = invoke(spec(tmp_path), "--jobs", 2, "--out", out, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(out)) == ["results.csv", "runs", "sweep.json"]
    runs = run_files(out)
    assert sorted(runs) == ["0", "1", "2", "3", "4", "5"]
    assert runs["4"]["params"] == {"inputs.c.value": 1.5, "seed": 1}
    assert {"values", "gradients", "summary", "train"} <= set(runs["4"])  # the run's JSON result
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["run", "inputs.c.value", "seed", "final_loss", "y/x.cosine",
                             "y/x.max_abs_diff", "y/x.sign_agreement", "error"]
    assert [r["seed"] for r in rows] == ["0", "1", "2"] * 2
    assert float(rows[4]["final_loss"]) == runs["4"]["train"]["final_loss"]

    report = json.loads(result.stdout)
    assert [g["params"] for g in report["groups"]] == [{"inputs.c.value": 0.5},
                                                       {"inputs.c.value": 1.5}]
    for group, ids in zip(report["groups"], (["0", "1", "2"], ["3", "4", "5"])):
        assert group["n"] == 3
        losses = [runs[i]["train"]["final_loss"] for i in ids]
        assert group["columns"]["final_loss"]["mean"] == pytest.approx(np.mean(losses), abs=1e-12)
        assert group["columns"]["final_loss"]["std"] == pytest.approx(np.std(losses, ddof=1),
                                                                      abs=1e-12)
        g = np.array([runs[i]["gradients"]["y"]["x"]["overridden"] for i in ids])
        t = np.array([runs[i]["gradients"]["y"]["x"]["true"] for i in ids])
        gm, tm = g.mean(0), t.mean(0)
        stats = group["gradients"]["y"]["x"]
        assert stats["grad_mean_norm"] == pytest.approx(np.sqrt(gm @ gm), abs=1e-12)
        assert stats["grad_std"] == pytest.approx(
            np.sqrt(np.mean([(r - gm) @ (r - gm) for r in g])), abs=1e-12)
        assert stats["bias"] == pytest.approx(np.sqrt((gm - tm) @ (gm - tm)), abs=1e-12)
        assert stats["cosine_of_means"] == pytest.approx(
            gm @ tm / np.sqrt((gm @ gm) * (tm @ tm)), abs=1e-12)
    assert [r["run"] for r in report["runs"]] == list("012345")
    assert report["runs"][0]["final"]["loss"] == runs["0"]["train"]["final_loss"]


def test_hard_tanh_gradient_is_the_clip_window_in_every_run(tmp_path):
    """Each run's overridden gradient of sum(sign(x) * x): sign(x) + x where |x| <= c."""
    out = tmp_path / "out"
    assert invoke(spec(tmp_path), "--jobs", 1, "--out", out).exit_code == 0
    for doc in run_files(out).values():
        c = doc["params"]["inputs.c.value"]
        g = np.array(doc["train"]["gradients"][0]["x"])  # the step-0 gradient, at the inputs
        over = np.array(doc["gradients"]["y"]["x"]["overridden"])
        np.testing.assert_allclose(g, over)
        s = np.array(doc["gradients"]["y"]["x"]["true"])  # sign(x) (sign's own gradient is 0)
        assert set(np.unique(s)) <= {-1.0, 1.0}
        extra = over - s  # x where |x| <= c, 0 elsewhere
        assert np.all((extra == 0) | (np.abs(extra) <= c))


def test_stochastic_binarization_bias_and_spread_by_hand(tmp_path):
    """b_r = +1 where u_r < (x+1)/2 (u_r the seed's uniform draw), g_r = b_r + x, t_r = b_r:
    so bias = |x| and grad_std = sqrt(mean_r |b_r - mean b|^2), computed here from the draws."""
    result = invoke(STOCHASTIC, "--seeds", 6, "--jobs", 2, "--format", "json")
    assert result.exit_code == 0, result.stderr
    (group,) = json.loads(result.stdout)["groups"]
    x = np.array([-0.8, -0.2, 0.3, 0.9])
    b = np.array([np.where(np.random.default_rng([s, 0]).uniform(0.0, 1.0, 4) < (x + 1) / 2,
                           1.0, -1.0) for s in range(6)])
    bm = b.mean(0)
    stats = group["gradients"]["y"]["x"]
    assert group["n"] == 6 and group["params"] == {}
    assert stats["bias"] == pytest.approx(np.linalg.norm(x), abs=1e-12)
    assert stats["grad_std"] == pytest.approx(np.sqrt(np.mean(np.sum((b - bm) ** 2, 1))), abs=1e-12)
    assert stats["grad_std"] > 0.5  # the draws do differ between seeds
    assert stats["grad_mean_norm"] == pytest.approx(np.linalg.norm(bm + x), abs=1e-12)
    cos = (bm + x) @ bm / (np.linalg.norm(bm + x) * np.linalg.norm(bm))
    assert stats["cosine_of_means"] == pytest.approx(cos, abs=1e-12)


# Run 2 fails to load only in combination (adam takes no momentum): each swept value on its
# own is fine, so the sweep starts, and the run fails on its own.
FAILING = HARDTANH.replace("sweep:\n  inputs.c.value: [0.5, 1.5]\n  seed: [0, 1, 2]\n", """\
expect:
  values: {y: 0.0}
sweep:
  zip:
    train.optimizer.name: [momentum, momentum, adam]
    expect.tolerance.atol: [100, 0, 100]
  train.optimizer.momentum: [0.5]
""").replace("{name: sgd, lr: 0.1}", "{name: momentum, lr: 0.1}")


@pytest.mark.parametrize("jobs", [1, 2])
def test_failed_runs_are_recorded_and_the_sweep_goes_on(tmp_path, jobs):
    out = tmp_path / "out"
    result = invoke(spec(tmp_path, FAILING), "--jobs", jobs, "--out", out, "--format", "csv")
    assert result.exit_code == 1
    runs = run_files(out)
    assert "error" not in runs["0"] and runs["0"]["train"]["final_loss"] is not None
    assert runs["1"]["exit_code"] == 1 and runs["1"]["error"].startswith("expect: values.y")
    assert "values" in runs["1"]  # a run whose expect failed keeps its result
    assert runs["2"]["exit_code"] == 2 and "no hyper-parameter 'momentum'" in runs["2"]["error"]
    assert ("run 2 (train.optimizer.name=adam, expect.tolerance.atol=100, "
            "train.optimizer.momentum=0.5) failed") in result.stderr
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["error"] == "" and rows[2]["error"] == runs["2"]["error"]
    assert rows[2]["final_loss"] == ""


def test_a_bad_first_run_is_exit_2_before_anything_runs(tmp_path):
    out = tmp_path / "out"
    result = invoke(spec(tmp_path), "--param", "train.steps=-1,2", "--out", out)
    assert result.exit_code == 2 and "--param train.steps: with train.steps=-1" in result.stderr
    assert not (out / "runs").exists() or not list((out / "runs").iterdir())


@pytest.mark.parametrize("item", ["sweep.seed=[0, 1]", "sweep={seed: [0]}"])
def test_a_set_of_the_sweep_block_is_refused_not_ignored(tmp_path, item):
    # --set gives every run one value; the grid was read from the spec's sweep block, so the
    # 6-run grid ran in full while the user asked for 2 seeds
    out = tmp_path / "out"
    result = invoke(spec(tmp_path), "--set", item, "--out", out)
    assert result.exit_code == 2, result.output
    assert f"--set {item}" in result.output and "--param KEY=V1,V2" in result.output
    assert "Traceback" not in result.output and not out.exists()


def test_a_foreign_dir_is_refused_and_left_alone(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    result = invoke(spec(tmp_path), "--jobs", 1, "--out", foreign)
    assert result.exit_code == 2 and "not a sweep's directory" in result.stderr
    assert os.listdir(foreign) == ["notes.txt"]

    out = tmp_path / "out"
    assert invoke(spec(tmp_path), "--jobs", 1, "--out", out, "--seeds", 2).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for args in (["--seeds", 3], ["--param", "inputs.c.value=0.5"]):  # another grid
        result = invoke(spec(tmp_path), "--jobs", 1, "--out", out, *args)
        assert result.exit_code == 2 and "different grid" in result.stderr
    other = spec(tmp_path, HARDTANH.replace("lr: 0.1", "lr: 0.2"), "other.yaml")  # another spec
    result = invoke(other, "--jobs", 1, "--out", out, "--seeds", 2)
    assert result.exit_code == 2 and "different spec" in result.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_the_same_command_again_runs_nothing_and_reports_everything(tmp_path):
    out = tmp_path / "out"
    first = invoke(spec(tmp_path), "--jobs", 1, "--out", out, "--format", "json")
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    (out / "runs" / "3.json").unlink()  # as if the sweep had stopped before run 3
    again = invoke(spec(tmp_path), "--jobs", 1, "--out", out, "--format", "json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["groups"] == json.loads(first.stdout)["groups"]
    now = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    assert {k for k in now if now[k] != stamps.get(k)} == {"3.json"}


# Runs 0-3 pass; runs 4-7 fail their expect (y is never exactly 0), each after training.
STOPPED = HARDTANH.replace("steps: 3", "steps: 800").replace(
    "sweep:\n  inputs.c.value: [0.5, 1.5]\n  seed: [0, 1, 2]\n",
    "expect:\n  values: {y: 0.0}\nsweep:\n  expect.tolerance.atol: [1000, 0]\n  seed: [0, 1, 2, 3]\n")


def full_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) whose buffer is already full: as stderr, it holds the
    sweep at its first message until the test reads (no race with the sweep's progress)."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(write_end, False)
    try:
        while True:
            os.write(write_end, b"." * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    return read_end, write_end


def children(pid: int) -> set:
    """The live processes whose parent is pid (a zombie has ended: only its exit status is left)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:  # it ended meanwhile
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields and int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def survivors(pids: set) -> set:
    alive = set()
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                alive.add(pid)
        except (OSError, IndexError):
            pass
    return alive


def outlived(workers: set) -> set:
    """The workers still there after a generous wait (they end with the sweep: tryout7
    finding 4), killed so that a failed test leaves no orphan behind either."""
    deadline = time.monotonic() + 30
    while survivors(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = survivors(workers)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.parametrize("jobs,sig,code", [("1", signal.SIGINT, 130), ("2", signal.SIGINT, 130),
                                           ("1", signal.SIGKILL, -signal.SIGKILL),
                                           ("2", signal.SIGKILL, -signal.SIGKILL),
                                           ("1", signal.SIGTERM, 143), ("2", signal.SIGTERM, 143)])
def test_ctrl_c_or_a_kill_keeps_finished_runs_and_the_same_command_resumes(tmp_path, jobs, sig,
                                                                           code):
    # The stop lands while the sweep is held (stderr full) at its first failed run's message,
    # so some runs are done and some are not, however loaded the machine: the test once
    # waited for a first run file and raced the remaining runs to the signal.
    path, out = spec(tmp_path, STOPPED), tmp_path / "out"
    command = [sys.executable, "-m", "gradcli", "sweep", str(path), "--jobs", jobs, "--out",
               str(out), "--no-numeric", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    read_end, write_end = full_pipe()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=write_end)
    os.close(write_end)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if any("error" in doc for doc in run_files(out).values()):  # written whole, or not yet
            break
        time.sleep(0.05)
    workers = children(proc.pid) if Path("/proc").is_dir() else set()
    assert len(workers) >= (2 if jobs == "2" else 0)
    proc.send_signal(sig)
    received = []
    reader = threading.Thread(target=lambda: received.append(os.fdopen(read_end, "rb").read()),
                              daemon=True)
    reader.start()  # (an orphaned worker would hold stderr open: the read would not end)
    try:
        proc.wait(timeout=60)
    finally:
        left = outlived(workers)
    assert not left, f"pool workers {left} outlived the sweep ({sig.name})"
    reader.join(timeout=60)
    err = received[0].lstrip(b".")
    assert proc.returncode == code, err.decode()
    kept = run_files(out)  # every file there is whole (each is written atomically)
    failed = [k for k, doc in kept.items() if "error" in doc]
    # held at the first failure: at most the 4 runs that pass were written before it
    assert len(failed) == 1 and int(failed[0]) >= 4 and len(kept) <= 5, sorted(kept)
    assert all("train" in d for d in kept.values())
    if sig != signal.SIGKILL:
        word = b"terminated" if sig == signal.SIGTERM else b"interrupted"
        assert word + b"; " in err and b"the same command resumes" in err
        assert b"Traceback" not in err
        rows = list(csv.DictReader((out / "results.csv").open()))
        assert sorted(r["run"] for r in rows) == sorted(kept)  # results.csv kept them all
    done = subprocess.run(command, env=env, capture_output=True, timeout=120)
    assert done.returncode == 1, done.stderr.decode()  # runs 4-7 failed their expect
    final = run_files(out)
    assert len(final) == 8 and all(final[k] == v for k, v in kept.items())
    assert sorted(k for k, doc in final.items() if "error" in doc) == ["4", "5", "6", "7"]
    assert len(json.loads(done.stdout)["runs"]) == 8


@pytest.mark.parametrize("stop_after_writing", [False, True])
def test_a_stop_around_a_run_files_writing_leaves_results_csv_equal_to_the_files(
        tmp_path, monkeypatch, stop_after_writing):
    # Ctrl-C landing just before or just after run 1's file is written (the window the
    # signal test above hits only by chance): results.csv lists exactly the run files.
    from gradcli.sweep.results import ResultsDir

    write_run = ResultsDir.write_run

    def stopping(self, run_id, text):
        if run_id == "1" and stop_after_writing:
            write_run(self, run_id, text)
        if run_id == "1":
            raise KeyboardInterrupt
        write_run(self, run_id, text)

    monkeypatch.setattr(ResultsDir, "write_run", stopping)
    out = tmp_path / "out"
    result = invoke(spec(tmp_path), "--jobs", 1, "--out", out, "--no-numeric")
    assert result.exit_code == 130, result.stderr
    kept = run_files(out)
    assert sorted(kept) == (["0", "1"] if stop_after_writing else ["0"])
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert sorted(r["run"] for r in rows) == sorted(kept)


def test_table_shows_each_group_and_its_gradient_statistics(tmp_path):
    result = CliRunner().invoke(cli, ["sweep", str(spec(tmp_path)), "--jobs", "1"],
                                env={"NO_COLOR": "1", "COLUMNS": "150"})
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "sweep of ht" in text and "the overridden gradient across the runs" in text
    assert text.count("y/x") == 2  # one row per group
    for column in ("inputs.c.value", "final_loss", "grad_std", "bias", "cosine_of_means"):
        assert column in text
    assert "0.5 " in text and "1.5 " in text and " ± " in text


METRICS_SWEEP = """\
sweep:
  train.optimizer.lr: [0.1, 0.5]
  seed: [0, 1, 2]
"""


def test_data_and_metrics_give_the_final_metric_columns(tmp_path):
    out = tmp_path / "out"
    result = invoke(blobs_spec(tmp_path, extra=METRICS_SWEEP), "--jobs", 2, "--out", out, "--format",
                    "json")
    assert result.exit_code == 0, result.stderr
    runs = run_files(out)
    with open(out / "results.csv", newline="") as f:
        rows = {r["run"]: r for r in csv.DictReader(f)}
    assert list(rows["0"])[:6] == ["run", "train.optimizer.lr", "seed", "final_loss",
                                   "final.accuracy.train", "final.accuracy.test"]
    for run_id, doc in runs.items():
        final = doc["train"]["final"]
        assert float(rows[run_id]["final.accuracy.test"]) == final["accuracy"]["test"]
        assert float(rows[run_id]["final_loss"]) == final["loss"]
    groups = json.loads(result.stdout)["groups"]
    tests = [runs[i]["train"]["final"]["accuracy"]["test"] for i in ("3", "4", "5")]
    assert groups[1]["columns"]["final.accuracy.test"]["mean"] == pytest.approx(np.mean(tests))
    assert groups[1]["columns"]["final.accuracy.test"]["std"] == pytest.approx(
        np.std(tests, ddof=1))


def test_a_directory_of_other_swept_keys_is_refused_in_plain_words(tmp_path):
    out = tmp_path / "out"
    assert invoke(spec(tmp_path), "--jobs", 1, "--out", out).exit_code == 0
    result = invoke(spec(tmp_path), "--jobs", 1, "--out", out, "--param", "train.steps=2,3")
    assert result.exit_code == 2
    assert result.stderr == (f"error: --out {out} holds a sweep of different swept keys; "
                             "resuming there would mix two sweeps: use another --out DIR (or "
                             "delete that one)\n")


def test_output_file_gets_the_report_stdout_would_and_the_failed_runs(tmp_path):
    path = spec(tmp_path, FAILING)
    shown = invoke(path, "--jobs", 1)
    target = tmp_path / "report.txt"
    result = invoke(path, "--jobs", 1, "--output", target)
    assert result.exit_code == shown.exit_code == 1 and result.stdout == ""
    text = target.read_text()
    assert "\x1b[" not in text and text.startswith(shown.stdout)  # plain text, the same tables
    assert "sweep of" in text and ("run 2 (train.optimizer.name=adam, expect.tolerance.atol=100, "
                                   "train.optimizer.momentum=0.5) failed: ") in text
    as_json = tmp_path / "report.json"
    assert invoke(path, "--jobs", 1, "--format", "json", "-o", as_json).stdout == ""
    doc = json.loads(as_json.read_text())
    assert [r["run"] for r in doc["runs"] if r.get("error")] == ["1", "2"]
    refused = invoke(path, "--jobs", 1, "--output", path)
    assert refused.exit_code == 2 and "is the spec being run" in refused.stderr
