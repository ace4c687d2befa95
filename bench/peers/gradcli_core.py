"""gradcli's core: each graph is built once (timed apart, as build), then replayed by gc.function."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

import gradcli as gc
from bench.measure import import_profile, run_child
from bench.peers import Absent, Case, Clock, Cold

VERSION = gc.__version__ if hasattr(gc, "__version__") else "?"
gc.gradients  # noqa: B018 - gradcli may import its core on first use: here, not inside a timed cold
REPO = Path(__file__).resolve().parents[2]
DEMO = "ste_sign_quantize_grad.yaml"  # the Makefile's `make demo` experiment


def _replay(fetches, inputs, values) -> Case:
    f = gc.function(fetches, feeds=inputs)
    return Case(lambda: f(*values))


class _NoClock:
    def mark(self, name: str) -> None:
        pass


NO_CLOCK = _NoClock()
COVERS = ("forward built, gc.gradients (the overridden set; the only one the workload needs), "
          "values by gc.evaluate (the path `gradcli run` takes)")


def _cold(build, d, forward_ops=None) -> Cold:
    """The one-shot path: build the forward and one gradient set, then evaluate, phase by phase."""
    clock = Clock()
    fetches, _, _ = build(d, clock)
    values = gc.evaluate(fetches)
    clock.mark("values")
    return Cold([np.asarray(v) for v in values], clock.phases, COVERS, forward_ops)


def _w1_graph(d, clock):
    x = gc.variable(d["x"])
    y = x
    for _ in range(d["n"]):
        y = gc.tanh(y * 1.0001 + 0.1)
    clock.mark("forward")
    grads = gc.gradients(y, [x])
    clock.mark("gradients")
    return [y, *grads], [x], [d["x"]]


def w1(d, variant=None) -> Case:
    return _replay(*_w1_graph(d, NO_CLOCK))


def cold_w1(d, variant=None) -> Cold:
    return _cold(_w1_graph, d, forward_ops=3 * d["n"])  # mul, add, tanh per step


def build_costs_w1(d) -> dict:
    """CPU and wall seconds of W1's forward, its overridden and its true gradient set, built apart."""
    clock = Clock()
    fetches, (x,), _ = _w1_graph(d, clock)
    gc.true_gradients(fetches[0], [x])
    clock.mark("true_gradients")
    return clock.phases


def _w2_graph(d, clock):
    x, w = gc.variable(d["x"]), gc.variable(d["w"])
    with gc.gradient_override_map({"sign": "hardtanh"}):
        s = gc.sign(x)
    y = gc.sum(s * w + 0.5 * x * x)
    clock.mark("forward")
    grads = gc.gradients(y, [x, w])
    clock.mark("gradients")
    return [y, *grads], [x, w], [d["x"], d["w"]]


def w2(d, variant=None) -> Case:
    return _replay(*_w2_graph(d, NO_CLOCK))


def cold_w2(d, variant=None) -> Cold:
    return _cold(_w2_graph, d)


def mlp_loss(X, labels, W1, b1, W2, classes: int, dtype):
    """Mean softmax cross-entropy from gc ops: log_softmax, one_hot, sum, mean."""
    logp = gc.log_softmax(gc.matmul(gc.tanh(gc.matmul(X, W1) + b1), W2))
    return -gc.mean(gc.sum(gc.one_hot(labels, classes, dtype=dtype) * logp, axis=1))


def _w3_graph(d, clock):
    names = ("X", "W1", "b1", "W2")
    inputs = [gc.variable(d[k]) for k in names]
    labels = gc.constant(d["labels"], dtype=np.int64)
    X, W1, b1, W2 = inputs
    loss = mlp_loss(X, labels, W1, b1, W2, d["classes"], d["dtype"])
    clock.mark("forward")
    grads = gc.gradients(loss, inputs)
    clock.mark("gradients")
    return [loss, *grads], inputs, [d[k] for k in names]


def w3(d, variant=None) -> Case:
    return _replay(*_w3_graph(d, NO_CLOCK))


def cold_w3(d, variant=None) -> Cold:
    return _cold(_w3_graph, d)


def _w4_graph(d, clock):
    x = gc.variable(d["x"])
    y = x
    for _ in range(d["n"]):
        y = y * 0.999 + 0.001
    loss = gc.sum(y)
    clock.mark("forward")
    grads = gc.gradients(loss, [x])
    clock.mark("gradients")
    return [loss, *grads], [x], [d["x"]]


def w4(d, variant=None) -> Case:
    return _replay(*_w4_graph(d, NO_CLOCK))


def cold_w4(d, variant=None) -> Cold:
    return _cold(_w4_graph, d, forward_ops=2 * d["n"] + 1)  # mul, add per step; the sum


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


def cold_w5(d, variant=None) -> Cold:
    """The first training step from nothing: graph, gradients, clip, the optimizer's first apply."""
    clock = Clock()
    X, labels = gc.constant(d["X"]), gc.constant(d["labels"], dtype=np.int64)
    params = [gc.variable(d[k], name=k) for k in ("W1", "b1", "W2")]
    loss = mlp_loss(X, labels, *params, d["classes"], d["dtype"])
    clock.mark("forward")
    grads = gc.gradients(loss, params)
    clock.mark("gradients")
    clipped, _ = gc.clip_by_global_norm(grads, d["clip"])
    opt = gc.train.GradientDescentOptimizer(d["lr"])
    pairs = list(zip(clipped, params, strict=True))
    for _ in range(d["steps"]):  # the cold path runs W5 with steps=1
        opt.apply_gradients(pairs)
    clock.mark("clip + apply_gradients")
    return Cold([p.numpy() for p in params], clock.phases,
                "forward built, gc.gradients, clip_by_global_norm, apply_gradients (compiles and "
                "runs the step)")


def w6(d, variant=None, top: int = 15) -> Case:
    """A gradcli command, process start to exit: d["command"] ("run" by default; "{demo}" in it is
    the bundled demo experiment), e.g. `gradcli run <demo>`, `gradcli --help`, `gradcli check <demo>`."""
    exe = Path(sys.executable).parent / "gradcli"
    if not exe.exists() or importlib.util.find_spec("gradcli.cli") is None:
        raise Absent("gradcli CLI not installed")
    specs = sorted((REPO / "experiments").glob("*.yaml"))
    if not specs:
        raise Absent("no bundled experiment in experiments/")
    spec = next((s for s in specs if s.name == DEMO), specs[0])
    words = d.get("command", "run {demo}").split()
    argv = [str(exe), *(str(spec.relative_to(REPO)) if w == "{demo}" else w for w in words)]
    last = {}

    def run():
        last["seconds"], last["maxrss_mb"] = run_child(argv, cwd=str(REPO))
        return ()

    case = Case(run, to_numpy=lambda out: [], child_peak_mb=lambda: last["maxrss_mb"],
                profile=lambda: import_profile(argv, cwd=str(REPO), top=top))
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
