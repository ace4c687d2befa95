"""W7 (training on data: BinaryConnect on digits) in the benchmark: its peers agree, its targets."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import report, worker  # noqa: E402
from bench.peers import numpy_floor  # noqa: E402
from bench.peers.torch_peer import binaryconnect_loss  # noqa: E402
from bench.workloads import SIZES, WORKLOADS, compare, make_data  # noqa: E402

QUICK = argparse.Namespace(quick=True, single=True, repeats=1, min_runs=1, warmup=0, budget=1.0,
                           profile=False)


def test_w7_is_a_workload_with_the_issue_sizes():
    assert "W7" in WORKLOADS
    d = make_data("W7", SIZES["W7"]["full"])
    assert d["x_train"].shape == (1348, 64) and d["W1"].shape == (64, 32) and d["W2"].shape == (32, 10)
    assert d["steps"] == 20 * 22  # 1348 rows in batches of 64: 21 full and one of 4, per epoch
    # spec-v2's standardize: the training part's columns have mean 0 and std 1 (or 0 if constant)
    np.testing.assert_allclose(d["x_train"].mean(axis=0), 0, atol=1e-12)
    assert set(np.round(d["x_train"].std(axis=0), 12)) <= {0.0, 1.0}


def test_floor_w7_gradients_are_torch_autograd_with_a_hard_tanh_sign():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(5, 64)), rng.integers(0, 10, 5)
    params = [rng.uniform(-1.5, 1.5, (64, 32)), rng.normal(size=32), rng.uniform(-1.5, 1.5, (32, 10)),
              rng.normal(size=10)]
    loss, grads = numpy_floor.binaryconnect(X, y, *params)

    W1, b1, W2, b2 = (torch.tensor(p, requires_grad=True) for p in params)
    want = binaryconnect_loss(torch.tensor(X), torch.tensor(y), W1, b1, W2, b2)
    assert loss == pytest.approx(want.item(), rel=1e-12)
    for got, expected in zip(grads, torch.autograd.grad(want, [W1, b1, W2, b2]), strict=True):
        np.testing.assert_allclose(got, expected.numpy(), rtol=1e-10, atol=1e-14)
    assert np.any(grads[0] == 0) and np.any(grads[0] != 0)  # the window cut some weights, not all


@pytest.mark.parametrize("peer", ["gradcli", "torch"])
def test_w7_peers_train_to_the_floor_numbers(peer):
    r = worker.measure_cell(peer, "W7", QUICK)
    assert r["status"] == "ok", r
    assert r["steps_per_s"] > 0 and r["check"].startswith("max relative difference")


def test_w7_on_a_peer_without_it_says_why():
    r = worker.measure_cell("autograd", "W7", QUICK)
    assert r["status"] in {"n/a", "absent"}
    if r["status"] == "n/a":
        assert r["reason"] == "W7 compares gradcli with the floor and torch eager only"


def _cell(peer, median):
    return {"workload": "W7", "peer": peer, "status": "ok", "median_s": median}


@pytest.mark.parametrize("gradcli_s, torch_s, met", [(1.0, 1.5, True), (1.0, 0.8, False)])
def test_w7_targets_the_floor_and_torch_eager(gradcli_s, torch_s, met):
    results = [_cell("numpy", 0.95), _cell("gradcli", gradcli_s), _cell("torch", torch_s)]
    report.add_ratios(results)
    verdicts = {v["target"]: v for v in report.verdicts(results) if v["workload"] == "W7"}
    speed = verdicts[">= 0.9x the floor's steps/s"]
    assert speed["value"] == pytest.approx(0.95 / gradcli_s) and speed["met"] is (0.95 / gradcli_s >= 0.9)
    ahead = verdicts["more steps/s than torch"]
    assert ahead["value"] == pytest.approx(torch_s / gradcli_s) and ahead["met"] is met
    assert ahead["verdict"].startswith("met" if met else "missed")


def test_w7_against_torch_not_run_is_not_measured():
    results = [_cell("numpy", 1.0), _cell("gradcli", 1.0)]
    report.add_ratios(results)
    ahead = [v for v in report.verdicts(results) if v["target"] == "more steps/s than torch"][0]
    assert ahead["met"] is None and ahead["verdict"] == "not measured (torch: not run)"


def test_compare_catches_a_w7_peer_that_trains_differently():
    d = make_data("W7", SIZES["W7"]["quick"])
    want = numpy_floor.w7(d).run()
    ok, _ = compare(list(numpy_floor.w7(dict(d, lr=0.011)).run()), list(want), 1e-6)
    assert not ok
