"""Training on data in the combinations test_train_on_data.py leaves out, on every backend,
against tf.compat.v1.train written here (TensorFlow's optimizers, clipping and
GradientTape; spec-v2's split, batches and schedules from tests/spec_v2.py):
Nesterov momentum with per-tensor clip_by_norm and a constraint, Adam with its own betas
and epsilon over a partial last batch and a cosine schedule past its steps, clip_by_value
with an exponential schedule and no test part, float32 specs, a model above the numpy
core's small-model size (its fused step) with clip_by_global_norm and two constraints,
and constraints that read each other's variables and the batch (all evaluated on the
updated values before any replaces its variable)."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import tensorflow as tf
from oracle import dataset
from spec_v2 import batches, learning_rate, split, standardized

from gradcli import runner
from gradcli.spec import load_spec_text

SEED = 5
ACCURACY = "mean(cast(argmax(logits, axis=1) == y, dtype(logits)))"
LINEAR = {"W": [[0.3, -0.2, 0.1], [-0.4, 0.25, 0.05], [0.15, 0.1, -0.3]], "b": [0.0, 0.1, -0.1]}
_rng = np.random.default_rng(0)
MLP = {"W1": _rng.normal(size=(3, 12)) * 0.5, "b1": _rng.normal(size=12) * 0.1,
       "W2": _rng.normal(size=(12, 3)) * 0.5, "b2": np.zeros(3)}  # 87 elements: above SMALL


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("data")
    x, y = dataset()
    np.savez(path / "d.npz", X=x, y=y)
    return path


def tf_logits(x, v: dict):
    if "W" in v:
        return tf.matmul(x, v["W"]) + v["b"]
    return tf.matmul(tf.nn.relu(tf.matmul(x, v["W1"]) + v["b1"]), v["W2"]) + v["b2"]


def tf_optimizer(name: str, lr, hyper: dict):
    train = tf.compat.v1.train
    if name == "sgd":
        return train.GradientDescentOptimizer(lr)
    if name == "momentum":
        return train.MomentumOptimizer(lr, hyper.get("momentum", 0.9),
                                       use_nesterov=hyper.get("nesterov", False))
    if name == "adam":
        return train.AdamOptimizer(lr, hyper.get("beta1", 0.9), hyper.get("beta2", 0.999),
                                   hyper.get("epsilon", 1e-8))
    return train.RMSPropOptimizer(lr, decay=hyper.get("decay", 0.9),
                                  momentum=hyper.get("momentum", 0.0),
                                  epsilon=hyper.get("epsilon", 1e-10))


def tf_clip(grads: list, clip):
    if clip is None:
        return grads
    kind, value = clip
    if kind == "norm":
        return [tf.clip_by_norm(g, value) for g in grads]
    if kind == "global_norm":
        return tf.clip_by_global_norm(grads, value)[0]
    return [tf.clip_by_value(g, *value) for g in grads]


def tf_train(c: dict) -> dict:
    """Losses per step, final variables and loss, and accuracy at spec-v2's evaluation points."""
    dtype, test = c.get("dtype", "float64"), c.get("test", 0.25)
    x, y = dataset()
    test_rows, train_rows = split(len(y), test, SEED)
    xtr, xte = x[train_rows], x[test_rows]
    if c.get("standardize", True):
        xtr, xte = standardized(xtr, xte)
    xtr, xte, ytr, yte = xtr.astype(dtype), xte.astype(dtype), y[train_rows], y[test_rows]
    v = {n: tf.Variable(np.asarray(a, dtype)) for n, a in c["init"].items()}
    names = list(v)
    lr = tf.Variable(np.float32(c["lr"]))
    opt = tf_optimizer(c["optimizer"], lr, c.get("hyper", {}))

    def loss_of(xb, yb):
        logits = tf_logits(tf.constant(xb), v)
        onehot = tf.one_hot(yb, 3, dtype=logits.dtype)
        return tf.reduce_mean(-tf.reduce_sum(onehot * tf.nn.log_softmax(logits, axis=1), axis=1))

    def accuracy():
        return tuple(float(np.mean(np.argmax(tf_logits(tf.constant(xp), v).numpy(), 1) == yp))
                     for xp, yp in ((xtr, ytr), (xte, yte)) if len(yp))

    per_epoch = len(batches(len(ytr), c["batch_size"], SEED, 0))
    rows = [r for e in range(c["epochs"]) for r in batches(len(ytr), c["batch_size"], SEED, e)]
    rows = rows[:c.get("steps", len(rows))]
    losses, evals = [], {0: accuracy()}
    for t, r in enumerate(rows):
        with tf.GradientTape() as tape:
            loss = loss_of(xtr[r], ytr[r])
        grads = tf_clip(tape.gradient(loss, [v[n] for n in names]), c.get("clip"))
        losses.append(float(loss))
        lr.assign(np.float32(learning_rate(c["lr"], c.get("schedule"), t)))
        opt.apply_gradients(zip(grads, [v[n] for n in names]))
        if "tf_constraints" in c:  # every one on the updated values, then all replace theirs
            new = c["tf_constraints"]({n: v[n].value() for n in names}, xtr[r])
            for n, value in new.items():
                v[n].assign(value)
        done = t + 1
        if done % per_epoch == 0 and (done // per_epoch) % c.get("eval_every", 1) == 0:
            evals[done] = accuracy()
    evals.setdefault(len(rows), accuracy())
    return {"loss": losses, "final": {n: v[n].numpy() for n in names},
            "final_loss": float(loss_of(xtr, ytr)), "evals": evals,
            "epochs": -(-len(rows) // per_epoch)}


def spec_text(c: dict) -> str:
    logits = ("matmul(X, W) + b" if "W" in c["init"]
              else "matmul(relu(matmul(X, W1) + b1), W2) + b2")
    inputs = "".join(f"  {n}: {np.asarray(a).tolist()}\n" for n, a in c["init"].items())
    text = f"""
seed: {SEED}
dtype: {c.get("dtype", "float64")}
data: {{load: d.npz, features: X, labels: y, test: {c.get("test", 0.25)},
        standardize: {str(c.get("standardize", True)).lower()}}}
inputs:
{inputs}let:
  logits: {logits}
outputs:
  loss: mean(-sum(one_hot(y, 3) * log_softmax(logits, axis=1), axis=1))
train:
  optimizer: {c["yaml"]}
  batch_size: {c["batch_size"]}
  epochs: {c["epochs"]}
  eval_every: {c.get("eval_every", 1)}
  metrics: {{accuracy: "{ACCURACY}"}}
"""
    for key in ("steps", "clip", "schedule_yaml", "constraints"):
        if key in c:
            text += f"  {key.removesuffix('_yaml')}: {c[key + '_text'] if key + '_text' in c else c[key]}\n"
    return text


CASES = {
    "nesterov-clip_by_norm-constraint": dict(
        init=LINEAR, optimizer="momentum", lr=0.3, hyper={"momentum": 0.7, "nesterov": True},
        yaml="{name: momentum, lr: 0.3, momentum: 0.7, nesterov: true}", batch_size=5, epochs=3,
        eval_every=2, clip=("norm", 0.4), clip_text="{norm: 0.4}",
        constraints='{W: "clip(W, -0.5, 0.5)"}',
        tf_constraints=lambda v, xb: {"W": tf.clip_by_value(v["W"], -0.5, 0.5)}),
    "adam-betas-partial_batch-cosine_past_its_steps": dict(
        init=LINEAR, optimizer="adam", lr=0.1, hyper={"beta1": 0.8, "beta2": 0.99, "epsilon": 1e-3},
        yaml="{name: adam, lr: 0.1, beta1: 0.8, beta2: 0.99, epsilon: 1.0e-3}", batch_size=7,
        epochs=3, schedule=("cosine", {"steps": 5}), schedule_yaml="{cosine: {steps: 5}}"),
    "clip_by_value-exponential-no_test_part-raw_features": dict(
        init=LINEAR, optimizer="sgd", lr=0.7, yaml="{name: sgd, lr: 0.7}", batch_size=6, epochs=2,
        test=0, standardize=False, clip=("value", (-0.05, 0.08)),
        clip_text="{value: [-0.05, 0.08]}", schedule=("exponential", {"gamma": 0.8}),
        schedule_yaml="{exponential: {gamma: 0.8}}"),
    "float32-adam-partial_batch": dict(
        init=LINEAR, optimizer="adam", lr=0.05, yaml="{name: adam, lr: 0.05}", batch_size=5,
        epochs=3, dtype="float32"),
    "float32-rmsprop_momentum-clip_by_norm-step_schedule-capped": dict(
        init=LINEAR, optimizer="rmsprop", lr=0.05, hyper={"momentum": 0.3},
        yaml="{name: rmsprop, lr: 0.05, momentum: 0.3}", batch_size=4, epochs=3, steps=10,
        eval_every=2, dtype="float32", clip=("norm", 0.25), clip_text="{norm: 0.25}",
        schedule=("step", {"every": 2, "gamma": 0.3}),
        schedule_yaml="{step: {every: 2, gamma: 0.3}}"),
    "fused_step-adam-clip_by_global_norm-two_constraints": dict(
        init=MLP, optimizer="adam", lr=0.05, yaml="{name: adam, lr: 0.05}", batch_size=5,
        epochs=3, steps=10, eval_every=2, clip=("global_norm", 0.5),
        clip_text="{global_norm: 0.5}",
        constraints='{W1: "clip(W1, -0.6, 0.6)", W2: "W2 / maximum(1.0, sqrt(sum(square(W2))))"}',
        tf_constraints=lambda v, xb: {
            "W1": tf.clip_by_value(v["W1"], -0.6, 0.6),
            "W2": v["W2"] / tf.maximum(tf.constant(1.0, tf.float64),
                                       tf.sqrt(tf.reduce_sum(tf.square(v["W2"]))))}),
    "float32-fused_step-momentum-clip_by_global_norm": dict(
        init=MLP, optimizer="momentum", lr=0.2, hyper={"momentum": 0.5},
        yaml="{name: momentum, lr: 0.2, momentum: 0.5}", batch_size=6, epochs=2, dtype="float32",
        clip=("global_norm", 0.3), clip_text="{global_norm: 0.3}",
        constraints='{W1: "clip(W1, -0.4, 0.4)"}',
        tf_constraints=lambda v, xb: {"W1": tf.clip_by_value(v["W1"], -0.4, 0.4)}),
    "constraints_read_each_others_updated_values_and_the_batch": dict(
        init=LINEAR, optimizer="momentum", lr=0.5, hyper={"momentum": 0.5},
        yaml="{name: momentum, lr: 0.5, momentum: 0.5}", batch_size=6, epochs=3,
        constraints='{W: "clip(W, -0.3, 0.3)", b: "b * 0.5 + 0.1 * sum(W) + 0.01 * mean(X)"}',
        tf_constraints=lambda v, xb: {
            "W": tf.clip_by_value(v["W"], -0.3, 0.3),
            "b": v["b"] * 0.5 + 0.1 * tf.reduce_sum(v["W"]) + 0.01 * np.mean(xb)}),
}


@functools.cache
def reference(case: str) -> dict:
    return tf_train(CASES[case])


@pytest.mark.parametrize("case", list(CASES))
def test_combination_matches_tf_train(folder, backend, case):
    c = CASES[case]
    exp = load_spec_text(spec_text(c), path=str(folder / "spec.yaml"))
    got = runner.run(exp, backend=backend, numeric=False).train
    want = reference(case)
    # float32: a framework's matmul or log_softmax may round one ulp apart from TensorFlow's
    rtol, atol = (2e-6, 1e-6) if c.get("dtype") == "float32" else (1e-10, 1e-13)
    assert got.steps == len(want["loss"]) and got.epochs == want["epochs"]
    np.testing.assert_allclose(got.loss, want["loss"], rtol=rtol, atol=atol)
    for name, value in want["final"].items():
        assert got.final[name].dtype == value.dtype
        np.testing.assert_allclose(got.final[name], value, rtol=rtol, atol=atol, err_msg=name)
    assert got.final_loss == pytest.approx(want["final_loss"], rel=rtol, abs=atol)
    assert got.eval_steps == sorted(want["evals"])
    parts = ["train", "test"][:len(want["evals"][0])]
    assert list(got.metrics["accuracy"]) == parts
    for k, part in enumerate(parts):
        assert got.metrics["accuracy"][part] == pytest.approx(
            [want["evals"][s][k] for s in got.eval_steps])
        assert got.final_metrics["accuracy"][part] == pytest.approx(want["evals"][got.steps][k])


def test_the_references_are_not_vacuous():
    """Each case trains (its variables move), clips or constrains where it says so, and the
    nesterov case differs from plain momentum."""
    for case, c in CASES.items():
        want = reference(case)
        assert any(np.max(np.abs(want["final"][n] - np.asarray(c["init"][n]))) > 1e-3
                   for n in want["final"]), case
    nesterov = reference("nesterov-clip_by_norm-constraint")
    plain = tf_train({**CASES["nesterov-clip_by_norm-constraint"], "hyper": {"momentum": 0.7}})
    assert np.max(np.abs(nesterov["final"]["W"] - plain["final"]["W"])) > 1e-3
    assert np.max(np.abs(nesterov["final"]["W"])) == pytest.approx(0.5)  # the constraint bit
