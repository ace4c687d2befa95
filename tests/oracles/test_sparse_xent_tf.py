"""sparse_softmax_cross_entropy_with_logits against TensorFlow's own op, called here: its second
derivative (TF 2.21 differentiates the fused op's gradient), labels out of range (TF's CPU
kernel refuses them; so does every backend, at the spec's place, also mid-training on the
numpy core), bad labels refused at build time, and training with it in combination with
data, constraints, an override_map and a schedule against the one_hot/log_softmax spelling."""
from __future__ import annotations

import numpy as np
import pytest
from available import backend_params
from oracle_helpers import check, literal, mismatch, run_spec, tensorflow

from gradcli.errors import SpecError

tf = tensorflow()
Z = np.random.default_rng(7).normal(size=(4, 5)) * 2.0
Y = np.array([4, 0, 2, 2])
V = np.random.default_rng(8).normal(size=(4, 5))

SECOND = f"""
dtype: float64
inputs:
  z: {literal(Z)}
  y: {{value: {literal(Y)}, dtype: int64}}
  v: {{value: {literal(V)}, trainable: false}}
let:
  l: sparse_softmax_cross_entropy_with_logits(y, z)
  g: grad(sum(l * l), z)
outputs:
  loss: sum(l * l)
  hvp: grad(sum(g * v), z)
wrt: [z]
"""


def _tf_second():
    z = tf.Variable(Z)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            rows = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=Y, logits=z)
            loss = tf.reduce_sum(rows * rows)
        g = inner.gradient(loss, z)
        inner_product = tf.reduce_sum(g * V)
    return loss.numpy(), g.numpy(), outer.gradient(inner_product, z).numpy()


@pytest.mark.parametrize("backend", backend_params())
def test_second_derivative_matches_tensorflow(backend):
    loss, g, hvp = _tf_second()
    result = run_spec(SECOND, backend)
    check(mismatch("loss", result.values["loss"], loss)
          + mismatch("gradient", result.gradients["loss"]["z"].overridden, g)
          + mismatch("Hessian-vector product", result.values["hvp"], hvp))


BAD = """
inputs:
  z: [[1.0, 2.0, 3.0], [0.5, 0.1, -1.0]]
  y: {{value: {labels}, dtype: int64}}
outputs:
  loss: mean(sparse_softmax_cross_entropy_with_logits(y, z))
wrt: [z]
"""


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("labels,bad", [("[2, 3]", 3), ("[-1, 0]", -1)])
def test_labels_out_of_range_fail_as_on_tensorflow_cpu(backend, labels, bad):
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"label value of {bad} "):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array(eval(labels)),
                                                       logits=np.zeros((2, 3)))
    with pytest.raises(SpecError) as info:
        run_spec(BAD.format(labels=labels), backend)
    text = str(info.value).lower()
    assert f"label value of {bad} " in text and "[0, 3)" in text and "oracle.yaml:6:" in text


@pytest.mark.parametrize("expr,words", [
    ("sparse_softmax_cross_entropy_with_logits(cast(y, float64), z)", "integer labels"),
    ("sparse_softmax_cross_entropy_with_logits(y, z[0])", "labels of logits' shape"),
])
def test_bad_labels_are_refused_before_anything_runs(expr, words):
    with pytest.raises(SpecError, match=words):
        run_spec(BAD.format(labels="[0, 1]").replace(
            "mean(sparse_softmax_cross_entropy_with_logits(y, z))", f"mean({expr})"), "numpy")


MID = """
seed: {seed}
data:
  load: d.csv
  features: X
  labels: y
  test: 0.0
inputs:
  W: {{zeros: [2, 2]}}
outputs:
  loss: mean(sparse_softmax_cross_entropy_with_logits(y, X @ W))
wrt: [W]
train:
  loss: loss
  optimizer: {{name: sgd, lr: 0.1}}
  batch_size: 2
  epochs: 2
"""


def test_a_label_out_of_range_in_a_later_batch_is_the_specs_error(tmp_path):
    from gradcli import runner
    from gradcli.spec import load_spec_text
    (tmp_path / "d.csv").write_text("a,b,label\n1,2,0\n2,1,1\n0,1,0\n3,3,1\n1,1,0\n2,2,5\n")
    # seed 2 puts the bad row in a later batch than the one the spec is built on
    for seed in (1, 2):
        spec = load_spec_text(MID.format(seed=seed), path=str(tmp_path / "mid.yaml"))
        with pytest.raises(SpecError, match=r"mid.yaml:11:.*label value of 5 .*\[0, 2\)"):
            runner.run(spec, backend="numpy")


TRAIN = """
name: fused-xent
seed: 3
data:
  load: {{dataset: iris}}
  features: X
  labels: y
  test: 0.25
  standardize: true
inputs:
  W: {{uniform: [-0.5, 0.5], shape: [4, 3]}}
  b: {{zeros: [3]}}
override_map:
  sign: identity
let:
  logits: X @ sign(W) * 0.5 + X @ W + b
outputs:
  loss: {loss}
wrt: [b]
train:
  loss: loss
  optimizer: {{name: rmsprop, lr: 0.02}}
  schedule: {{cosine: {{steps: 21}}}}
  batch_size: 16
  epochs: 3
  constraints:
    W: clip(W, -0.4, 0.4)
  metrics:
    accuracy: mean(cast(argmax(logits, axis=1) == y, dtype(logits)))
"""


@pytest.mark.parametrize("backend", backend_params())
def test_training_with_it_matches_the_one_hot_log_softmax_spelling(backend):
    """The fused op is the same function as -sum(one_hot * log_softmax): the same training
    (data, override_map, schedule, constraints, metrics) to rounding, on every backend."""
    fused = run_spec(TRAIN.format(loss="mean(sparse_softmax_cross_entropy_with_logits(y, logits))"),
                     backend).train
    spelled = run_spec(TRAIN.format(
        loss="-mean(sum(one_hot(y, 3) * log_softmax(logits, axis=1), axis=1))"), backend).train
    failures = mismatch("losses", np.array(fused.loss), np.array(spelled.loss), 1e-9, 1e-12)
    for name in ("W", "b"):
        failures += mismatch(name, fused.final[name], spelled.final[name], 1e-9, 1e-12)
    failures += mismatch("test accuracy", fused.final_metrics["accuracy"]["test"],
                         spelled.final_metrics["accuracy"]["test"])
    check(failures)
    assert fused.steps == 21 and np.all(np.abs(fused.final["W"]) <= 0.4)
