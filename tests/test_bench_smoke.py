"""A quick smoke run of the benchmark harness (`make bench` itself is never part of the tests)."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))

from bench import report, worker  # noqa: E402
from bench.peers import PEERS, Case, Peer, numpy_floor  # noqa: E402
from bench.workloads import SIZES, WORKLOADS, make_data  # noqa: E402

REPORTED = {"absent", "wrong", "n/a"}  # statuses a peer may end with instead of a ratio
OURS = {"numpy", "gradcli"}  # a third-party peer that fails (status error) is reported, not ours to fix


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--json", str(out / "r.json"),
                           "--markdown", str(out / "r.md")], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "r.json").read_text()), (out / "r.md").read_text()


def test_quick_run_reports_every_workload_on_every_peer(quick):
    doc, _ = quick
    cells = {(r["workload"], r["peer"]): r for r in doc["results"]}
    assert set(cells) == {(w, p) for w in WORKLOADS for p in PEERS}
    for (w, p), r in cells.items():
        if r["status"] == "ok":
            assert r["ratio"] > 0 and r["median_s"] > 0, (w, p, r)
        else:
            allowed = REPORTED if p in OURS else REPORTED | {"error"}
            assert r["status"] in allowed and r["reason"], (w, p, r)


def test_gradcli_agrees_with_the_floor_on_every_gradient_workload(quick):
    doc, _ = quick
    for r in doc["results"]:
        if r["peer"] in ("numpy", "gradcli") and not r["workload"].startswith("W6"):
            assert r["status"] == "ok", r
            assert r["peak_mb"] is not None and r["traced_peak_mb"] >= 0


def test_markdown_has_the_targets_and_every_reason(quick):
    doc, markdown = quick
    assert "## Targets" in markdown and "| W4 | no recursion limit touched |" in markdown
    for r in doc["results"]:
        if r["status"] != "ok":
            assert r["reason"] in markdown


def _cell(monkeypatch, peer: Peer, workload: str, module=None) -> dict:
    monkeypatch.setitem(PEERS, "fake", peer)
    if module is not None:
        monkeypatch.setitem(sys.modules, f"bench.peers.{peer.module}", module)
    args = argparse.Namespace(quick=True, single=True, repeats=1, min_runs=1, warmup=0, budget=1.0,
                              profile=False)
    return worker.measure_cell("fake", workload, args)


def test_a_peer_that_is_not_installed_is_reported_absent(monkeypatch):
    r = _cell(monkeypatch, Peer("numpy_floor", None, ("no_such_framework_here",), "fake"), "W2")
    assert r["status"] == "absent" and r["reason"] == "absent: no_such_framework_here not installed"
    doc = {"command": "test", "quick": True, "threads": 1, "load": [(0, 0, 0)] * 2, "workloads": ["W2"],
           "machine": report.machine(), "results": [r], "targets": report.verdicts([r])}
    assert "| fake | absent: no_such_framework_here not installed |" in report.markdown(doc)


def test_a_peer_whose_gradient_differs_is_reported_wrong_not_timed(monkeypatch):
    fake = types.ModuleType("bench.peers.fake_wrong")
    fake.VERSION = "0"

    def w2(d, variant=None):
        good = numpy_floor.w2(d)
        return Case(lambda: [v * 1.001 if i == 1 else v for i, v in enumerate(good.run())])

    fake.w2 = w2
    r = _cell(monkeypatch, Peer("fake_wrong", None, ("numpy",), "fake"), "W2", fake)
    assert r["status"] == "wrong" and "output 1 differs from the floor" in r["reason"]
    assert "median_s" not in r


def test_paired_measurement_alternates_gradcli_and_the_floor():
    args = argparse.Namespace(quick=True, repeats=5, warmup=0, budget=0.0)
    r = worker.measure_paired("gradcli", "W1", args)
    assert r["paired_n"] == 5 and 0 < r["paired_ratio"] < 100, r


def _central_difference(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


def test_floor_w1_and_w4_gradients_match_central_differences():
    d = make_data("W1", {"n": 10})
    y, g = numpy_floor.w1(d).run()
    fd = _central_difference(lambda x: numpy_floor.w1({**d, "x": x[()]}).run()[0], np.array(d["x"]))
    assert g == pytest.approx(float(fd), rel=1e-6)
    d = make_data("W4", {"n": 50, "width": 3})
    _, g = numpy_floor.w4(d).run()
    fd = _central_difference(lambda x: numpy_floor.w4({**d, "x": x}).run()[0], d["x"])
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_floor_mlp_gradients_match_central_differences():
    d = make_data("W3-f64", {**SIZES["W3-f64"]["quick"], "batch": 4, "d_in": 3, "hidden": 5, "classes": 3})
    names = ["X", "W1", "b1", "W2"]
    loss, *grads = numpy_floor.w3(d).run()
    for name, g in zip(names, grads, strict=True):
        def f(v, name=name):
            return numpy_floor.mlp(*[v if k == name else d[k] for k in ["X", "labels", "W1", "b1", "W2"]])[0]
        np.testing.assert_allclose(g, _central_difference(f, d[name]), rtol=1e-5, atol=1e-9, err_msg=name)


def test_floor_w2_gradient_is_the_straight_through_hard_tanh():
    d = {"x": np.array([-2.0, -0.5, 0.25, 1.0, 3.0]), "w": np.array([1.0, 2.0, 3.0, 4.0, 5.0])}
    y, gx, gw = numpy_floor.w2(d).run()
    assert y == pytest.approx(-1 - 2 + 3 + 4 + 5 + 0.5 * (4 + 0.25 + 0.0625 + 1 + 9))
    np.testing.assert_array_equal(gx, [0 - 2.0, 2 - 0.5, 3 + 0.25, 4 + 1.0, 0 + 3.0])
    np.testing.assert_array_equal(gw, np.sign(d["x"]))
