"""gradcli sweep on Dask: a real `dask scheduler` and two `dask worker` processes on 127.0.0.1
(--scheduler), and a cluster started by gradcli itself (--dask). The run files must be the
ones a local run writes, failed runs included."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

sys.path.insert(0, str(Path(__file__).parent))
from test_sweep_cli import FAILING, HARDTANH  # noqa: E402

ROOT = Path(__file__).parent.parent.parent
DASK = Path(sys.executable).parent / "dask"
SMALL = HARDTANH.replace("seed: [0, 1, 2]", "seed: [0, 1]")  # 4 runs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler():
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the workers import this gradcli
    quiet = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **quiet)]
    procs += [subprocess.Popen([str(DASK), "worker", address, "--nthreads", "1", "--no-dashboard",
                                "--host", "127.0.0.1"], **quiet) for _ in range(2)]
    try:
        from dask.distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
            assert len(client.scheduler_info()["workers"]) == 2
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def sweep(tmp_path, text, name, *args):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    out = tmp_path / name
    result = CliRunner().invoke(cli, ["sweep", str(path), "--out", str(out), *map(str, args)])
    runs = {p.stem: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}
    for doc in runs.values():
        doc.pop("time"), doc.pop("cpu")
    return result, runs, (out / "results.csv").read_text()


def test_scheduler_runs_the_sweep_on_two_workers_as_a_local_pool_would(tmp_path, scheduler):
    remote, remote_runs, remote_csv = sweep(tmp_path, SMALL, "remote", "--scheduler", scheduler,
                                            "--format", "json")
    assert remote.exit_code == 0, remote.stderr
    local, local_runs, local_csv = sweep(tmp_path, SMALL, "local", "--jobs", 1, "--format", "json")
    assert sorted(remote_runs) == ["0", "1", "2", "3"]
    assert remote_runs == local_runs and remote_csv == local_csv
    assert json.loads(remote.stdout) == json.loads(local.stdout)

    (tmp_path / "remote" / "runs" / "2.json").unlink()  # resuming on the cluster: runs 2 only
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "remote" / "runs").iterdir()}
    again, again_runs, _ = sweep(tmp_path, SMALL, "remote", "--scheduler", scheduler)
    assert again.exit_code == 0 and again_runs == local_runs
    now = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "remote" / "runs").iterdir()}
    assert {k for k in now if now[k] != stamps.get(k)} == {"2.json"}

    failed, runs, _ = sweep(tmp_path, FAILING, "failing", "--scheduler", scheduler)
    assert failed.exit_code == 1
    assert runs["1"]["exit_code"] == 1 and runs["1"]["error"].startswith("expect:")
    assert runs["2"]["exit_code"] == 2 and "'momentum'" in runs["2"]["error"]


def test_unreachable_scheduler_is_exit_2(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SMALL)
    result = CliRunner().invoke(cli, ["sweep", str(path), "--scheduler",
                                      f"tcp://127.0.0.1:{free_port()}"],
                                env={"GRADCLI_DASK_TIMEOUT": "1s"})
    assert result.exit_code == 2 and "cannot reach the Dask scheduler" in result.stderr


def test_dask_and_scheduler_together_are_refused(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SMALL)
    result = CliRunner().invoke(cli, ["sweep", str(path), "--dask", "--scheduler", "tcp://x:1"])
    assert result.exit_code == 2 and "give one of them" in result.stderr


def test_dask_starts_a_local_cluster(tmp_path):
    result, runs, _ = sweep(tmp_path, SMALL, "here", "--dask", "--jobs", 2)
    assert result.exit_code == 0, result.stderr
    _, local_runs, _ = sweep(tmp_path, SMALL, "local", "--jobs", 1)
    assert runs == local_runs


def test_without_dask_installed_the_hint_is_exit_2(tmp_path):
    code = ("import sys; sys.modules['dask'] = None; sys.modules['dask.distributed'] = None\n"
            "from gradcli.cli import main; sys.argv = ['gradcli', 'sweep', sys.argv[1], '--dask']\n"
            "main()")
    path = tmp_path / "s.yaml"
    path.write_text(SMALL)
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2 and "pip install 'gradcli[dask]'" in proc.stderr
