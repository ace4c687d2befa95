"""Training on every backend against tf.compat.v1 graph-mode training written here: a registered
straight-through gradient under override_map, and a non-scalar loss (trained on its sum)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf
from backend_helpers import load
from click.testing import CliRunner

from gradcli import runner
from gradcli.cli import cli

W0 = [0.9, -0.3, 1.4, -1.2, 0.05]
A = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 1.0, 0.75], [0.3, -0.2, 1.1], [2.0, 0.5, -1.5]]
T = [[1.0, -2.0, 0.5]]
LR, STEPS = 0.05, 6

STE_SPEC = f"""
inputs:
  w: {W0}
  a: {{value: {A}, trainable: false}}
  t: {{value: {T}, trainable: false}}
register:
  HardTanhSTE: where(abs(x) <= 1, dy, zeros_like(dy))
override_map:
  sign: HardTanhSTE
let:
  q: sign(w)
outputs:
  loss: sum(square(matmul(reshape(q, [1, 5]), a) - t))
train:
  loss: loss
  optimizer: {{name: sgd, lr: {LR}}}
  steps: {STEPS}
"""

VECTOR_SPEC = f"""
inputs:
  w: {W0}
  a: {{value: {A}, trainable: false}}
outputs:
  losses: square(matmul(reshape(w, [1, 5]), a) - 1.0) + sin(w[0:3])
train:
  loss: losses
  optimizer: {{name: momentum, lr: {LR}, momentum: 0.9}}
  steps: {STEPS}
"""


def tf_train(build_loss, make_optimizer) -> tuple[list, np.ndarray]:
    """Losses before each step (summed) and the final w, trained by tf.compat.v1 in a graph."""
    graph = tf.Graph()
    with graph.as_default():
        w = tf.compat.v1.Variable(np.array(W0), dtype=tf.float64)
        loss = build_loss(graph, w)
        step = make_optimizer().minimize(loss)
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            losses = []
            for _ in range(STEPS):
                losses.append(float(np.sum(session.run(loss))))
                session.run(step)
            return losses, session.run(w)


@pytest.fixture(scope="module")
def ste_reference():
    @tf.RegisterGradient("GradcliTestHardTanhSTE")
    def _hard_tanh_ste(op, grad):
        x = op.inputs[0]
        return tf.where(tf.abs(x) <= 1, grad, tf.zeros_like(grad))

    def build(graph, w):
        with graph.gradient_override_map({"Sign": "GradcliTestHardTanhSTE"}):
            q = tf.sign(w)
        y = tf.matmul(tf.reshape(q, [1, 5]), tf.constant(A, tf.float64)) - tf.constant(T, tf.float64)
        return tf.reduce_sum(tf.square(y))

    return tf_train(build, lambda: tf.compat.v1.train.GradientDescentOptimizer(LR))


@pytest.fixture(scope="module")
def vector_reference():
    def build(graph, w):
        y = tf.matmul(tf.reshape(w, [1, 5]), tf.constant(A, tf.float64))
        return tf.square(y - 1.0) + tf.sin(w[0:3])  # shape [1, 3]: minimize takes its sum

    return tf_train(build, lambda: tf.compat.v1.train.MomentumOptimizer(LR, 0.9))


def test_registered_straight_through_gradient_trains(backend, ste_reference):
    losses, w = ste_reference
    result = runner.run(load(STE_SPEC, "ste"), backend=backend)
    np.testing.assert_allclose(result.train.loss, losses, rtol=1e-12)
    np.testing.assert_allclose(result.train.final["w"], w, rtol=1e-12, atol=1e-15)
    # the window matters: w[2] = 1.4 and w[3] = -1.2 never move
    assert result.train.final["w"][2] == 1.4 and result.train.final["w"][3] == -1.2


def test_check_and_run_agree_on_a_registered_gradient_in_training(tmp_path):
    spec = tmp_path / "ste.yaml"
    spec.write_text(STE_SPEC)
    cli_runner = CliRunner()
    assert cli_runner.invoke(cli, ["check", str(spec)]).exit_code == 0
    run = cli_runner.invoke(cli, ["run", str(spec), "--format", "json"])
    assert run.exit_code == 0, run.stderr
    assert len(json.loads(run.stdout)["train"]["loss"]) == STEPS


def test_a_non_scalar_loss_trains_on_its_sum(backend, vector_reference):
    losses, w = vector_reference
    result = runner.run(load(VECTOR_SPEC, "vector"), backend=backend)
    np.testing.assert_allclose(result.train.loss, losses, rtol=1e-12)
    np.testing.assert_allclose(result.train.final["w"], w, rtol=1e-12)
    assert [m for m in result.warnings if "train.loss 'losses' has shape (1, 3)" in m
            and "its sum" in m]


def test_the_json_warnings_say_the_loss_was_summed(tmp_path):
    spec = tmp_path / "vector.yaml"
    spec.write_text(VECTOR_SPEC)
    run = CliRunner().invoke(cli, ["run", str(spec), "--format", "json"])
    assert run.exit_code == 0, run.stderr
    assert any("minimizes (and reports) its sum" in w for w in json.loads(run.stdout)["warnings"])
