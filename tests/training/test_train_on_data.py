"""Training on data on every backend against tf.compat.v1.train written in oracle.py: rmsprop
and each schedule, constraints, metrics at their evaluation points, and a combination
(data + override_map + constraints + schedule + clip)."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import tensorflow as tf
from oracle import B0, SEED, W0, batch_rows, dataset, parts, tf_train

from gradcli import runner
from gradcli.spec import load_spec_text

MODEL = f"""
seed: {SEED}
data: {{load: d.npz, features: X, labels: y, test: 0.25, standardize: true}}
inputs:
  W: {W0}
  b: {B0}
let:
  logits: matmul(X, W) + b
outputs:
  loss: mean(-sum(one_hot(y, 3) * log_softmax(logits, axis=1), axis=1))
"""
ACCURACY = "mean(cast(argmax(logits, axis=1) == y, dtype(logits)))"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("data")
    x, y = dataset()
    np.savez(path / "d.npz", X=x, y=y)
    return path


def run(folder, train: str, backend: str, head: str = MODEL):
    exp = load_spec_text(head + train, path=str(folder / "spec.yaml"))
    return runner.run(exp, backend=backend, numeric=False).train


CASES = {  # optimizer, its yaml, schedule for the oracle, schedule yaml
    "rmsprop-cosine": ("rmsprop", "{name: rmsprop, lr: 0.05}", ("cosine", {"steps": 7}),
                       "{cosine: {steps: 7}}"),
    "sgd-step": ("sgd", "{name: sgd, lr: 0.3}", ("step", {"every": 3, "gamma": 0.5}),
                 "{step: {every: 3, gamma: 0.5}}"),
    "adam-exponential": ("adam", "{name: adam, lr: 0.05}", ("exponential", {"gamma": 0.9}),
                         "{exponential: {gamma: 0.9}}"),
    "rmsprop-momentum": ("rmsprop", "{name: rmsprop, lr: 0.02, momentum: 0.5, decay: 0.8}",
                         None, None),
}
_REFERENCES: dict = {}


def reference(case: str):
    if case not in _REFERENCES:
        name, _, schedule, _ = CASES[case]
        hyper = {"momentum": 0.5, "decay": 0.8} if case == "rmsprop-momentum" else {}
        lr = {"rmsprop-cosine": 0.05, "sgd-step": 0.3, "adam-exponential": 0.05,
              "rmsprop-momentum": 0.02}[case]
        data = parts()
        rows = batch_rows(len(data[1]), 5, 3)
        _REFERENCES[case] = tf_train(name, lr, hyper, schedule, rows, data)
    return _REFERENCES[case]


@pytest.mark.parametrize("case", list(CASES))
def test_optimizers_and_schedules_match_tf_train(folder, backend, case):
    _, optimizer, _, schedule = CASES[case]
    train = f"""
train:
  optimizer: {optimizer}
  batch_size: 5
  epochs: 3
""" + (f"  schedule: {schedule}\n" if schedule else "")
    got = run(folder, train, backend)
    losses, w, b, final, _ = reference(case)
    assert len(got.loss) == 12 and got.steps == 12 and got.epochs == 3  # 17 rows: 5, 5, 5, 2
    np.testing.assert_allclose(got.loss, losses, rtol=1e-10)
    np.testing.assert_allclose(got.final["W"], w, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(got.final["b"], b, rtol=1e-10, atol=1e-13)
    assert got.final_loss == pytest.approx(final, rel=1e-10)
    assert got.stopped is None and got.metrics == {} and got.eval_steps == []


def test_rmsprop_moves_differently_from_torch_rmsprop(folder):
    """The oracle is not vacuous: torch's RMSprop (mean square from zeros, epsilon outside
    the sqrt) would give other numbers after one step."""
    torch = pytest.importorskip("torch")
    xtr, ytr, _, _ = parts()
    w = torch.tensor(np.array(W0), requires_grad=True)
    b = torch.tensor(np.array(B0), requires_grad=True)
    opt = torch.optim.RMSprop([w, b], lr=0.05, alpha=0.9, eps=1e-10)
    r = batch_rows(len(ytr), 5, 1)[0]
    logits = torch.tensor(xtr[r]) @ w + b
    loss = -(torch.nn.functional.one_hot(torch.tensor(ytr[r]), 3) *
             torch.log_softmax(logits, 1)).sum(1).mean()
    loss.backward()
    opt.step()
    got = run(folder, "train: {optimizer: {name: rmsprop, lr: 0.05}, batch_size: 5, steps: 1}",
              "numpy")
    assert np.max(np.abs(got.final["W"] - w.detach().numpy())) > 1e-3


@functools.cache
def constrained_reference():
    data = parts()
    rows = batch_rows(len(data[1]), 5, 5, cap=18)
    return tf_train("momentum", 0.4, {"momentum": 0.5}, None, rows, data,
                    constraint=lambda v: tf.clip_by_value(v, -0.35, 0.35), eval_at=(0, 8, 16, 18))


@functools.cache
def combination_reference():
    data = parts()
    rows = batch_rows(len(data[1]), 6, 2)
    return tf_train("rmsprop", 0.1, {}, ("step", {"every": 2, "gamma": 0.5}), rows, data,
                    constraint=lambda v: tf.clip_by_value(v, -1.5, 1.5), clip_global=0.5,
                    sign_ste=True)


def test_constraints_metrics_and_eval_points_match_tf(folder, backend):
    """W kept in [-0.35, 0.35] after every step; accuracy on both parts before the first
    step, every 2 epochs and after the last step (5 epochs of 4 batches, capped at 18 steps:
    epochs begun 5, evaluations after 0, 8, 16 and 18 steps)."""
    train = f"""
train:
  optimizer: {{name: momentum, lr: 0.4, momentum: 0.5}}
  batch_size: 5
  epochs: 5
  steps: 18
  constraints: {{W: "clip(W, -0.35, 0.35)"}}
  metrics: {{accuracy: "{ACCURACY}", mean_logit: mean(logits)}}
  eval_every: 2
"""
    got = run(folder, train, backend)
    data = parts()
    losses, w, b, final, acc = constrained_reference()
    assert got.steps == 18 and got.epochs == 5 and got.eval_steps == [0, 8, 16, 18]
    np.testing.assert_allclose(got.loss, losses, rtol=1e-10)
    np.testing.assert_allclose(got.final["W"], w, rtol=1e-10, atol=1e-13)
    assert np.max(np.abs(got.final["W"])) <= 0.35 and np.max(np.abs(w)) == pytest.approx(0.35)
    assert got.final_loss == pytest.approx(final, rel=1e-10)
    # (a framework's mean of 12 ones in 17 may be an ulp off numpy's)
    assert got.metrics["accuracy"]["train"] == pytest.approx([acc[s][0] for s in (0, 8, 16, 18)])
    assert got.metrics["accuracy"]["test"] == pytest.approx([acc[s][1] for s in (0, 8, 16, 18)])
    assert len(set(got.metrics["accuracy"]["train"])) > 1  # training changed it
    xtr, _, xte, _ = data
    logits_test = xte @ w + b
    assert got.final_metrics["mean_logit"]["test"] == pytest.approx(np.mean(logits_test), rel=1e-10)
    assert got.final_metrics["accuracy"] == pytest.approx({"train": acc[18][0], "test": acc[18][1]})


def test_combination_override_map_constraints_schedule_clip(folder, backend):
    """A sign with a straight-through gradient under override_map, clip_by_global_norm, a step
    schedule and a constraint, trained on data: tf.compat.v1.train with tf.custom_gradient."""
    head = MODEL.replace("matmul(X, W)", "matmul(X, sign(W))") + """
register:
  HardTanhSTE: where(abs(x) <= 1, dy, zeros_like(dy))
override_map:
  sign: HardTanhSTE
"""
    train = """
train:
  optimizer: {name: rmsprop, lr: 0.1}
  clip: {global_norm: 0.5}
  batch_size: 6
  epochs: 2
  schedule: {step: {every: 2, gamma: 0.5}}
  constraints: {W: "clip(W, -1.5, 1.5)"}
"""
    got = run(folder, train, backend, head)
    losses, w, b, final, _ = combination_reference()
    assert got.steps == 6 and got.epochs == 2  # 17 rows: 6, 6, 5
    np.testing.assert_allclose(got.loss, losses, rtol=1e-10)
    np.testing.assert_allclose(got.final["W"], w, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(got.final["b"], b, rtol=1e-10, atol=1e-13)
    assert got.final_loss == pytest.approx(final, rel=1e-10)


def test_values_and_gradients_are_on_the_first_batch(folder):
    """The run's values table holds the first training batch of epoch 0, not a later one."""
    result = runner.run(load_spec_text(MODEL + "train: {optimizer: {name: sgd, lr: 0.1}, "
                                       "batch_size: 5, epochs: 2}", path=str(folder / "s.yaml")),
                        numeric=False)
    xtr, ytr, _, _ = parts()
    r = batch_rows(len(ytr), 5, 1)[0]
    np.testing.assert_allclose(result.values["logits"], xtr[r] @ np.array(W0) + B0, rtol=1e-12)


def test_steps_alone_run_epochs_until_the_cap(folder):
    """With data and steps but no epochs, epochs follow each other until the steps are done:
    6 steps of 4 batches per epoch begin 2 epochs and take the same batches as epochs: 2."""
    data = parts()
    rows = batch_rows(len(data[1]), 5, 2, cap=6)
    losses, w, _, _, _ = tf_train("sgd", 0.2, {}, None, rows, data)
    got = run(folder, "train: {optimizer: {name: sgd, lr: 0.2}, batch_size: 5, steps: 6}", "numpy")
    assert got.steps == 6 and got.epochs == 2
    np.testing.assert_allclose(got.loss, losses, rtol=1e-10)
    np.testing.assert_allclose(got.final["W"], w, rtol=1e-10, atol=1e-13)
