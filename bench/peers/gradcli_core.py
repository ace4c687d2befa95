"""gradcli's core: each graph is built once (timed apart, as build), then replayed by gc.function."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

import gradcli as gc
from bench.measure import import_profile, run_child
from bench.peers import Absent, Case

VERSION = gc.__version__ if hasattr(gc, "__version__") else "?"
REPO = Path(__file__).resolve().parents[2]
DEMO = "ste_sign_quantize_grad.yaml"  # the Makefile's `make demo` experiment


def _replay(fetches, inputs, values) -> Case:
    f = gc.function(fetches, feeds=inputs)
    return Case(lambda: f(*values))


def w1(d, variant=None) -> Case:
    x = gc.variable(d["x"])
    y = x
    for _ in range(d["n"]):
        y = gc.tanh(y * 1.0001 + 0.1)
    return _replay([y, *gc.gradients(y, [x])], [x], [d["x"]])


def w2(d, variant=None) -> Case:
    x, w = gc.variable(d["x"]), gc.variable(d["w"])
    with gc.gradient_override_map({"sign": "hardtanh"}):
        s = gc.sign(x)
    y = gc.sum(s * w + 0.5 * x * x)
    return _replay([y, *gc.gradients(y, [x, w])], [x, w], [d["x"], d["w"]])


def mlp_loss(X, labels, W1, b1, W2, classes: int, dtype):
    """Mean softmax cross-entropy from gc ops: log_softmax, one_hot, sum, mean."""
    logp = gc.log_softmax(gc.matmul(gc.tanh(gc.matmul(X, W1) + b1), W2))
    return -gc.mean(gc.sum(gc.one_hot(labels, classes, dtype=dtype) * logp, axis=1))


def w3(d, variant=None) -> Case:
    names = ("X", "W1", "b1", "W2")
    inputs = [gc.variable(d[k]) for k in names]
    labels = gc.constant(d["labels"], dtype=np.int64)
    X, W1, b1, W2 = inputs
    loss = mlp_loss(X, labels, W1, b1, W2, d["classes"], d["dtype"])
    return _replay([loss, *gc.gradients(loss, inputs)], inputs, [d[k] for k in names])


def w4(d, variant=None) -> Case:
    x = gc.variable(d["x"])
    y = x
    for _ in range(d["n"]):
        y = y * 0.999 + 0.001
    loss = gc.sum(y)
    return _replay([loss, *gc.gradients(loss, [x])], [x], [d["x"]])


def w5(d, variant=None) -> Case:
    """The product's training path: clip_by_global_norm, then the optimizer's apply_gradients."""
    X, labels = gc.constant(d["X"]), gc.constant(d["labels"], dtype=np.int64)
    params = [gc.variable(d[k], name=k) for k in ("W1", "b1", "W2")]
    loss = mlp_loss(X, labels, *params, d["classes"], d["dtype"])
    clipped, _ = gc.clip_by_global_norm(gc.gradients(loss, params), d["clip"])
    opt = gc.train.GradientDescentOptimizer(d["lr"])
    pairs = list(zip(clipped, params, strict=True))
    opt.apply_gradients(pairs)  # compiles the schedule, as the first training step would

    def reset():
        for p in params:
            p.assign(d[p.label])

    def run():
        for _ in range(d["steps"]):
            opt.apply_gradients(pairs)
        return [p.numpy() for p in params]

    return Case(run, reset=reset)


def w6(d, variant=None) -> Case:
    """`gradcli run` on a bundled experiment, process start to exit."""
    exe = Path(sys.executable).parent / "gradcli"
    if not exe.exists() or importlib.util.find_spec("gradcli.cli") is None:
        raise Absent("gradcli CLI not installed")
    specs = sorted((REPO / "experiments").glob("*.yaml"))
    if not specs:
        raise Absent("no bundled experiment in experiments/")
    spec = next((s for s in specs if s.name == DEMO), specs[0])
    argv = [str(exe), "run", str(spec.relative_to(REPO))]
    last = {}

    def run():
        last["seconds"], last["maxrss_mb"] = run_child(argv, cwd=str(REPO))
        return ()

    case = Case(run, to_numpy=lambda out: [], child_peak_mb=lambda: last["maxrss_mb"],
                profile=lambda: import_profile(argv, cwd=str(REPO)))
    case.notes["command"] = " ".join(["gradcli", *argv[1:]])
    return case


W7_SPEC = """\
name: w7-binaryconnect
description: bench W7, experiments/binaryconnect_digits.yaml with the workload's weights
seed: {seed}
data:
  load: {{dataset: digits}}
  features: X
  labels: y
  test: 0.25
  standardize: true
inputs:
  W1: {{load: w7.npz, key: W1}}
  b1: {{load: w7.npz, key: b1}}
  W2: {{load: w7.npz, key: W2}}
  b2: {{load: w7.npz, key: b2}}
override_map:
  sign: hardtanh
let:
  h: relu(X @ sign(W1) * 0.125 + b1)
  logits: h @ sign(W2) * 0.25 + b2
outputs:
  loss: mean(sparse_softmax_cross_entropy_with_logits(y, logits))
wrt: [b2]
train:
  loss: loss
  optimizer: {{name: rmsprop, lr: {lr}}}
  batch_size: {batch}
  epochs: {epochs}
  constraints:
    W1: clip(W1, -1, 1)
    W2: clip(W2, -1, 1)
"""


def w7(d, variant=None) -> Case:
    """The product's training on data: the spec loaded and built once (graph, gradients), then
    gradcli.training's loop (the one `gradcli run` uses) over the numpy core's Trainee."""
    import tempfile

    from gradcli import backends
    from gradcli.spec import load_spec
    from gradcli.training import train

    names = ("W1", "b1", "W2", "b2")
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp) / "w7.npz", **{k: d[k] for k in names})
        spec = Path(tmp) / "w7.yaml"
        spec.write_text(W7_SPEC.format(**d))
        experiment = load_spec(spec)
    trainee = backends.build(experiment, "numpy").trainee()
    initial = {k: d[k] for k in names}

    def reset():
        trainee.assign({k: v.copy() for k, v in initial.items()})
        trainee.slots = {n: {} for n in trainee.names}  # RMSProp's mean square starts afresh

    def run():
        record = train(trainee, experiment)
        return [*(record.final[k] for k in names), record.final_loss]

    return Case(run, reset=reset)
