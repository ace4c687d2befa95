"""Replay: a worker builds each distinct graph once, and a replayed run gives exactly what a
fresh `gradcli run` of the same spec gives."""
import json
from pathlib import Path

import pytest

from gradcli import render, runner
from gradcli.spec import load_spec_text
from gradcli.spec.sweep import parse_param, set_text
from gradcli.sweep.execute import Worker
from gradcli.sweep.grid import axes, grid

ROOT = Path(__file__).parent.parent.parent

# BinaryConnect-style: sign(W) in the forward pass, an STE chosen by override_map, trained.
BINARY = """\
name: binary
inputs:
  X: {normal: [0, 1], shape: [6, 3], trainable: false}
  W: {uniform: [-2, 2], shape: [3, 2]}
  t: {value: [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], trainable: false}
override_map:
  Sign: identity
let:
  h: matmul(X, sign(W))
outputs:
  loss: mean(square(tanh(h) - t))
train:
  loss: loss
  optimizer: {name: momentum, lr: 0.1}
  steps: 4
"""


def docs_both_ways(text, params_list):
    """Each run through one Worker (replaying) and as a fresh run of its own."""
    worker = Worker(text, "spec.yaml", render.to_json)
    replayed = [json.loads(worker.run(str(i), p)[1]) for i, p in enumerate(params_list)]
    fresh = []
    for params in params_list:
        experiment = load_spec_text(text, "spec.yaml", [set_text(k, v) for k, v in params.items()])
        fresh.append(json.loads(json.dumps(render.to_json(runner.run(experiment)))))
    for doc in replayed:
        assert "error" not in doc, doc.get("error")
        for key in ("run", "params", "time", "cpu"):
            doc.pop(key)
    return worker, [json.loads(json.dumps(d)) for d in replayed], fresh


def params_of(*param_texts):
    return [r.params for r in grid(axes(None, [parse_param(p) for p in param_texts], None)).runs]


def test_values_only_sweep_builds_once_and_replays_exactly():
    params = params_of("seed=0,1,2", "train.optimizer.lr=0.05,0.3", "train.steps=2,5")
    worker, replayed, fresh = docs_both_ways(BINARY, params)
    assert worker.builds == 1
    assert replayed == fresh
    assert len({json.dumps(d["train"]["params"]) for d in replayed}) == len(params)  # all differ


def test_an_override_map_entry_is_structure_one_build_per_choice():
    params = params_of("override_map.sign=identity,hardtanh", "seed=0,1")
    params = params + params  # the second pass replays both graphs
    worker, replayed, fresh = docs_both_ways(BINARY, params)
    assert worker.builds == 2
    assert replayed == fresh
    assert replayed[0]["gradients"] != replayed[2]["gradients"]  # identity vs hardtanh


def test_random_ops_make_the_seed_structural():
    text = (ROOT / "experiments" / "stochastic_binarization_sweep.yaml").read_text()
    params = params_of("seed=0,1,2") * 2
    worker, replayed, fresh = docs_both_ways(text, params)
    assert worker.builds == 3
    assert replayed == fresh
    assert replayed[0]["values"]["b"] != replayed[1]["values"]["b"] or \
        replayed[1]["values"]["b"] != replayed[2]["values"]["b"]


def test_a_failed_run_does_not_spoil_the_graph_for_the_next():
    worker = Worker(BINARY, "spec.yaml", render.to_json)
    bad, _ = worker.run("0", {"train.steps": -1})
    assert bad["exit_code"] == 2 and "train.steps" in bad["error"]
    good = json.loads(worker.run("1", {"seed": 4})[1])
    experiment = load_spec_text(BINARY, "spec.yaml", ["seed=4"])
    fresh = render.to_json(runner.run(experiment))
    assert good["train"]["loss"] == pytest.approx(fresh["train"]["loss"], abs=0)


def test_data_specs_replay_across_seeds_and_rebuild_for_another_split():
    """With data:, a seed is another split and batch order (new values, same graph); another
    test share changes the batch's shape (a graph of its own)."""
    path = ROOT / "experiments" / "data" / "two_blobs.yaml"
    text = path.read_text()
    worker = Worker(text, str(path), render.to_json)
    for params in ({"seed": 0}, {"seed": 1}, {"data.test": 0.5, "seed": 3}, {"seed": 2}):
        digest, run_text = worker.run("r", params)
        replayed = json.loads(run_text)
        for key in ("run", "params", "time", "cpu", "error", "exit_code", "failure"):
            replayed.pop(key, None)
        overrides = [set_text(k, v) for k, v in params.items()]
        fresh = render.to_json(runner.run(load_spec_text(text, str(path), overrides)))
        assert replayed == json.loads(json.dumps(fresh))
        assert ("error" in digest) == (params != {"seed": 0})  # expect holds for seed 0 only
    assert worker.builds == 2
