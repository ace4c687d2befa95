"""experiments/binaryconnect_clip_range_sweep.yaml: one run of the sweep (a narrow hard-tanh
window, another seed) against the same model trained in torch (tests/training_reference.py's
binaryconnect with the sweep's window)."""
from __future__ import annotations

import json

import numpy as np
import torch
from click.testing import CliRunner
from training_reference import EXPERIMENTS, binaryconnect, clip_weights, digits, parts, train

from gradcli.cli import cli
from gradcli.spec import load_spec

SWEEP = EXPERIMENTS / "binaryconnect_clip_range_sweep.yaml"


def test_a_run_of_the_sweep_trains_as_torch_does(tmp_path):
    out = tmp_path / "sweep"
    result = CliRunner().invoke(cli, ["sweep", str(SWEEP), "--param", "inputs.c.value=0.03",
                                      "--seeds", "3:4", "--jobs", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output[-2000:]
    (run_file,) = (out / "runs").glob("*.json")
    got = json.loads(run_file.read_text())["train"]

    experiment = load_spec(SWEEP, ["seed=3"])
    weights = {k: np.array(v.value, dtype=np.float64) for k, v in experiment.inputs.items()
               if v.trainable}
    torch.set_num_threads(1)
    want = train(binaryconnect("hardtanh", c=0.03), weights,
                 parts(*digits(), 0.25, 3, standardize=True), seed=3, epochs=3, batch_size=64,
                 optimizer="rmsprop", hyper={"lr": 0.01}, constraints=clip_weights)
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-7, atol=1e-12)
    assert got["eval_steps"] == want["eval_steps"]
    for part in ("train", "test"):
        np.testing.assert_allclose(got["metrics"]["accuracy"][part],
                                   want["metrics"]["accuracy"][part], rtol=1e-12)
    np.testing.assert_allclose(got["final"]["loss"], want["final"]["loss"], rtol=1e-7)
    assert 0.3 < want["final"]["accuracy"]["test"] < 0.8  # it learns, less than with c >= 0.1
