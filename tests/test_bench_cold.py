"""The benchmark's cold path (issue 14): its measurements, its verdicts (hand-computed) and its report."""
from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import cold, measure, report, report_cold  # noqa: E402
from bench.peers import PEERS, Cold, Peer, numpy_floor  # noqa: E402
from bench.workloads import COLD, STARTUP, WORKLOADS, cold_sizes, make_data  # noqa: E402


def _cell(workload, peer, cold_s, paired=None, cpu=None, **extra):
    r = {"workload": workload, "peer": peer, "status": "ok", "cold_s": cold_s,
         "cold_cpu_s": cold_s if cpu is None else cpu}
    if paired is not None:
        r["paired_cold_s"] = paired
    return {**r, **extra}


def _by(verdicts, workload, metric):
    return next(v for v in verdicts if v["workload"] == workload and v["metric"] == metric)


def test_cold_ratio_is_of_the_alternated_walls_with_the_fresh_cpu_ratio_beside():
    colds = [_cell("W1", "gradcli", 0.4, paired=0.3, cpu=0.4), _cell("W1", "torch", 0.9, paired=0.5, cpu=0.5),
             _cell("W4", "gradcli", 2.0, paired=1.0, cpu=1), _cell("W4", "torch", 2.5, paired=1.25, cpu=1.2)]
    v = report.verdicts([], colds)
    w1, w4 = _by(v, "W1", "cold"), _by(v, "W4", "cold")
    assert w1["value"] == pytest.approx(0.6) and w1["cells"] == pytest.approx(0.8)  # 0.3/0.5; 0.4/0.5
    assert w1["met"] is True and w1["verdict"] == "met: 0.60x"
    assert w4["value"] == pytest.approx(0.8) and w4["met"] is False and w4["cells"] == pytest.approx(1 / 1.2)
    assert w4["verdict"] == "missed: 0.80x, 14% over 0.70x"  # 0.8 / 0.7 = 1.143
    assert {x["workload"] for x in v} == {"W1", "W4"}  # W2/W3 not run: no rows for them


def test_cold_ratio_at_the_limit_is_met_and_without_alternated_runs_is_the_fresh_cpu_ratio():
    colds = [_cell("W2", "gradcli", 0.5, cpu=0.12), _cell("W2", "torch", 0.1, cpu=0.10)]
    w2 = _by(report.verdicts([], colds), "W2", "cold")
    assert w2["value"] == pytest.approx(1.2) and w2["met"] is True and w2["cells"] is None


def test_cold_without_torch_is_not_measured_and_says_why():
    colds = [_cell("W3-f64", "gradcli", 0.1), {"workload": "W3-f64", "peer": "torch", "status": "absent",
                                               "reason": "absent: torch not installed"}]
    v = _by(report.verdicts([], colds), "W3-f64", "cold")
    assert v["met"] is None and v["verdict"] == "not measured (torch: absent: torch not installed)"


def test_build_costs_per_forward_op_are_the_median_of_the_builds_apart_in_cpu_microseconds():
    def costs(fwd, grad, true):
        return {"forward": {"wall_s": 9.0, "cpu_s": fwd}, "gradients": {"wall_s": 9.0, "cpu_s": grad},
                "true_gradients": {"wall_s": 9.0, "cpu_s": true}}
    # 6000 forward ops: 0.018 s -> 3 µs, 0.012 -> 2, 0.024 -> 4 (median 3: met, at the limit)
    builds = [costs(0.018, 0.036, 0.024), costs(0.012, 0.030, 0.030), costs(0.024, 0.042, 0.027)]
    first = {"forward": {"wall_s": 1.0, "cpu_s": 0.06}, "gradients": {"wall_s": 1.0, "cpu_s": 0.12}}
    colds = [_cell("W1", "gradcli", 1.0, forward_ops=6000, build_costs=builds, phases=first),
             _cell("W1", "torch", 1.0)]
    v = report.verdicts([], colds)
    fwd, grad, true = _by(v, "W1", "build_us"), _by(v, "W1", "grad_us"), _by(v, "W1", "true_us")
    assert fwd["value"] == pytest.approx(3.0) and fwd["met"] is True and fwd["verdict"] == "met: 3.00 µs"
    assert fwd["cells"] == pytest.approx(10.0)  # the cold's own forward: 0.06 s / 6000
    assert grad["value"] == pytest.approx(6.0) and grad["met"] is False  # 6, 5, 7 µs
    assert grad["verdict"] == "missed: 6.00 µs, 20% over 5.00 µs" and grad["cells"] == pytest.approx(20.0)
    assert true["value"] == pytest.approx(4.5) and true["met"] is True  # 4, 5, 4.5 µs
    assert true["cells"] is None  # the cold builds no true gradients


def test_w4_cold_memory_target():
    v = report.verdicts([], [_cell("W4", "gradcli", 9.0, cold_mb=200.0), _cell("W4", "torch", 3.0)])
    mem = _by(v, "W4", "cold_mb")
    assert mem["value"] == 200.0 and mem["verdict"] == "missed: 200 MB, 33% over 150 MB"
    ok = _by(report.verdicts([], [_cell("W4", "gradcli", 9.0, cold_mb=150.0)]), "W4", "cold_mb")
    assert ok["met"] is True and ok["verdict"] == "met: 150 MB"


def test_startup_targets_are_1_5x_for_run_and_1_2x_for_the_other_commands():
    results = []
    for w, paired in [("W6", 1.6), ("W6-help", 1.2), ("W6-check", 1.26)]:
        results += [{"workload": w, "peer": "numpy", "status": "ok", "median_s": 0.1},
                    {"workload": w, "peer": "gradcli", "status": "ok", "median_s": 0.15,
                     "paired_ratio": paired}]
    report.add_ratios(results)
    v = report.verdicts(results)
    assert [x["workload"] for x in v] == ["W6", "W6-help", "W6-check"]
    assert _by(v, "W6", "time")["verdict"] == "missed: 1.60x, 7% over 1.5x"  # 1.6 / 1.5 = 1.067
    assert _by(v, "W6-help", "time")["verdict"] == "met: 1.20x"
    assert _by(v, "W6-check", "time")["verdict"] == "missed: 1.26x, 5% over 1.2x"
    assert _by(v, "W6-check", "time")["cells"] == pytest.approx(1.5)
    assert set(STARTUP) == {"W6", "W6-help", "W6-list", "W6-schema", "W6-check"} <= set(WORKLOADS)


def test_pooled_takes_the_median_of_the_rounds_the_largest_memory_and_the_paired_median():
    rounds = [_cell("W1", "gradcli", 0.3, cold_mb=5.0, phases={"forward": {"wall_s": 0.1, "cpu_s": 0.08}}),
              _cell("W1", "gradcli", 0.5, cold_mb=7.0, phases={"forward": {"wall_s": 0.3, "cpu_s": 0.12}})]
    paired = {"paired_cold": {"gradcli": [0.2, 0.9, 0.4]}, "paired_cold_cpu": {"gradcli": [0.1, 0.2, 0.3]}}
    r = cold.pooled(rounds, paired)
    assert r["cold_s"] == pytest.approx(0.4) and r["cold_mb"] == 7.0 and r["rounds"] == 2
    assert r["phases"]["forward"] == {"wall_s": pytest.approx(0.2), "cpu_s": pytest.approx(0.1)}
    assert r["paired_cold_s"] == 0.4 and r["paired_n"] == 3 and r["paired_cold_cpu_s"] == 0.2
    bad = {"workload": "W1", "peer": "gradcli", "status": "wrong", "reason": "wrong: x"}
    assert cold.pooled([rounds[0], bad], paired) is bad


def test_gradcli_cold_agrees_with_the_floor_and_times_its_phases():
    r = cold.measure_cell("gradcli", "W1", quick=True)
    assert r["status"] == "ok", r
    assert list(r["phases"]) == ["forward", "gradients", "values"] and r["forward_ops"] == 3 * 50
    assert r["check"].startswith("max relative difference") and r["cold_s"] > 0
    assert len(r["build_costs"]) == 3 and "true_gradients" in r["build_costs"][0]
    w5 = cold.measure_cell("gradcli", "W5", quick=True)  # one step: the floor's first step's weights
    assert w5["status"] == "ok" and cold_sizes("W5", quick=True)["steps"] == 1


def test_gradcli_cold_values_are_the_hand_derived_chain_rule():
    d = make_data("W1", {"n": 3})
    from bench.peers import gradcli_core
    y, g = gradcli_core.cold_w1(d).outputs
    ys = [d["x"]]
    for _ in range(3):
        ys.append(np.tanh(ys[-1] * 1.0001 + 0.1))
    want = np.prod([(1 - u * u) * 1.0001 for u in ys[1:]])
    assert float(y) == pytest.approx(float(ys[-1]), rel=1e-15) and float(g) == pytest.approx(want, rel=1e-14)


def test_a_peer_whose_cold_outputs_differ_is_reported_wrong(monkeypatch):
    fake = types.ModuleType("bench.peers.fake_cold")
    fake.VERSION = "0"

    def cold_w2(d, variant=None):
        y, gx, gw = numpy_floor.w2(d).run()
        return Cold([y, gx * 1.01, gw])

    fake.cold_w2 = cold_w2
    monkeypatch.setitem(PEERS, "fake", Peer("fake_cold", None, ("numpy",), "fake"))
    monkeypatch.setitem(sys.modules, "bench.peers.fake_cold", fake)
    r = cold.measure_cell("fake", "W2", quick=True)
    assert r["status"] == "wrong" and "output 1 differs from the floor" in r["reason"]


def test_paired_cold_alternates_every_peer_at_least_three_rounds():
    e = cold.measure_paired(["gradcli", "numpy", "no_such"], "W1", quick=True, budget=0.0, repeats=10)
    assert set(e["paired_cold"]) == {"gradcli", "numpy"} and "no_such" in e["paired_errors"]
    assert len(e["paired_cold"]["gradcli"]) == 3 == len(e["paired_cold_cpu"]["numpy"])
    assert set(COLD) == {"W1", "W2", "W3-f32", "W3-f64", "W4", "W5"}


def test_cold_section_of_the_report():
    colds = [_cell("W1", "gradcli", 0.3, paired=0.2, cpu=0.25, paired_n=4, cold_mb=1.0, covers="the one-shot",
                   phases={"forward": {"wall_s": 0.1, "cpu_s": 0.06}}, forward_ops=6000),
             _cell("W1", "torch", 0.1, paired=0.1, cpu=0.1, paired_n=4, cold_mb=2.0, covers="first call")]
    lines = "\n".join(report_cold.markdown(colds))
    row = "| gradcli | **200.0 ms** (n=4) | **2.00x** | 250.0 ms | 2.50x | 300.0 ms | 1.0 | the one-shot |"
    assert row in lines
    assert "| W1 | forward | 100.0 ms | 60.0 ms | 10.00 µs |" in lines


IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |     numpy._core
import time:        50 |        150 |   numpy
import time:        30 |         30 |   yaml
import time:        20 |        200 | gradcli.fd
import time:        10 |         10 | click
"""


def test_importtime_counts_numpy_subtrees_inside_each_module():
    rows = {r["name"]: r for r in measure.parse_importtime(IMPORTTIME)}
    fd = rows["gradcli.fd"]
    assert fd["numpy"] == 150 and fd["cum"] - fd["numpy"] == 50
    assert rows["numpy"]["numpy"] == 150 and rows["yaml"]["numpy"] == 0 and rows["click"]["depth"] == 0
    assert rows["numpy._core"]["depth"] == 2
