"""Training against tf.compat.v1.train's own optimizers, run here in eager TensorFlow: sgd,
momentum (Nesterov too) and adam, after clipping by norm, global norm or value, on float64 and
float32 variables, through a spec on every backend and through gc.train. TF1 rounds Python-float
hyper-parameters through float32 (lr 0.1 is 0.10000000149011612 on a float64 variable) and keeps
Adam's beta powers in float32: the numbers must agree to the last few ulps."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from backend_helpers import load

import gradcli as gc
from gradcli import runner
from gradcli.errors import GradcliError

W0, B0, STEPS = [1.0, -2.0, 3.0], 0.5, 5
# Both float64 and float32 to a few ulps: the float64 bound fails when a hyper-parameter is
# taken at its float64 value (1e-8 relative off) or Adam's powers are computed in float64.
TOLERANCE = {"float64": dict(rtol=1e-14, atol=0), "float32": dict(rtol=5e-7, atol=0)}

OPTIMIZERS = {
    "sgd": ({"name": "sgd", "lr": 0.1},
            lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1)),
    "momentum": ({"name": "momentum", "lr": 0.1, "momentum": 0.9},
                 lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)),
    "nesterov": ({"name": "momentum", "lr": 0.3, "momentum": 0.7, "nesterov": True},
                 lambda: tf.compat.v1.train.MomentumOptimizer(0.3, 0.7, use_nesterov=True)),
    "adam": ({"name": "adam", "lr": 0.1},
             lambda: tf.compat.v1.train.AdamOptimizer(0.1)),
    "adam_hyper": ({"name": "adam", "lr": 0.03, "beta1": 0.8, "beta2": 0.99, "epsilon": 0.001},
                   lambda: tf.compat.v1.train.AdamOptimizer(0.03, 0.8, 0.99, 0.001)),
}
CLIPS = {
    None: lambda grads: grads,
    "norm": lambda grads: [tf.clip_by_norm(g, 1.0) for g in grads],
    "global_norm": lambda grads: tf.clip_by_global_norm(grads, 1.0)[0],
    "value": lambda grads: [tf.clip_by_value(g, -0.5, 0.5) for g in grads],
}
SPEC_CLIP = {None: "", "norm": "{norm: 1}", "global_norm": "{global_norm: 1}",
             "value": "{value: [-0.5, 0.5]}"}
# every optimizer with every clip would be 20 runs per backend and dtype; these cover each
# optimizer twice and each clip at least twice
CASES = [("sgd", None), ("sgd", "norm"), ("momentum", "value"), ("momentum", "global_norm"),
         ("nesterov", "value"), ("nesterov", "norm"), ("adam", "global_norm"), ("adam", None),
         ("adam_hyper", "norm"), ("adam_hyper", "value")]
CASE_IDS = [f"{opt}-{clip or 'noclip'}" for opt, clip in CASES]


def tf_reference(optimizer: str, clip: str | None, dtype: str) -> tuple[list, dict]:
    """Losses before each step and the final w, b: tf.compat.v1.train on tf.Variables of dtype."""
    w, b = tf.Variable(np.array(W0, dtype)), tf.Variable(np.array(B0, dtype))
    opt = OPTIMIZERS[optimizer][1]()
    losses = []
    for _ in range(STEPS):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w * 2 + b - 1))
        losses.append(float(loss.numpy()))
        grads = CLIPS[clip](tape.gradient(loss, [w, b]))
        opt.apply_gradients(list(zip(grads, [w, b])))
    return losses, {"w": w.numpy(), "b": b.numpy()}


@pytest.fixture(scope="module")
def references():
    cache: dict = {}

    def get(optimizer: str, clip: str | None, dtype: str):
        key = (optimizer, clip, dtype)
        if key not in cache:
            cache[key] = tf_reference(optimizer, clip, dtype)
        return cache[key]

    return get


def spec_text(optimizer: str, clip: str | None, dtype: str) -> str:
    hyper = ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}"
                      for k, v in OPTIMIZERS[optimizer][0].items())
    clip_line = f"\n  clip: {SPEC_CLIP[clip]}" if clip else ""
    return f"""
dtype: {dtype}
inputs:
  w: {W0}
  b: {B0}
outputs:
  loss: sum(square(w * 2 + b - 1))
train:
  loss: loss
  optimizer: {{{hyper}}}{clip_line}
  steps: {STEPS}
"""


def assert_matches(losses, final, reference, dtype: str) -> None:
    tf_losses, tf_final = reference
    tol = TOLERANCE[dtype]
    for name in ("w", "b"):
        np.testing.assert_allclose(np.asarray(final[name], np.float64), tf_final[name], **tol,
                                   err_msg=f"final {name}")
    np.testing.assert_allclose(losses, tf_losses, **tol, err_msg="losses before each step")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("optimizer, clip", CASES, ids=CASE_IDS)
def test_a_spec_trains_to_tf_compat_v1_train_numbers(backend, optimizer, clip, dtype, references):
    result = runner.run(load(spec_text(optimizer, clip, dtype), "tf-optimizers", dtype), backend=backend)
    assert result.train.final["w"].dtype == np.dtype(dtype)
    assert_matches(result.train.loss, result.train.final, references(optimizer, clip, dtype), dtype)


def _gc_optimizer(optimizer: str):
    hyper = dict(OPTIMIZERS[optimizer][0])
    name, lr = hyper.pop("name"), hyper.pop("lr")
    if name == "sgd":
        return gc.train.GradientDescentOptimizer(lr)
    if name == "momentum":
        return gc.train.MomentumOptimizer(lr, hyper["momentum"], use_nesterov=hyper.get("nesterov", False))
    return gc.train.AdamOptimizer(lr, **hyper)


def _gc_clip(clip: str | None, grads: list) -> list:
    if clip == "norm":
        return [gc.clip_by_norm(g, 1.0) for g in grads]
    if clip == "global_norm":
        return gc.clip_by_global_norm(grads, 1.0)[0]
    if clip == "value":
        return [gc.clip_by_value(g, -0.5, 0.5) for g in grads]
    return grads


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("optimizer, clip", CASES, ids=CASE_IDS)
def test_gc_train_optimizers_give_tf_compat_v1_train_numbers(optimizer, clip, dtype, references):
    w, b = gc.variable(W0, dtype=dtype), gc.variable(B0, dtype=dtype)
    loss = gc.sum(gc.square(w * 2.0 + b - 1.0))
    opt = _gc_optimizer(optimizer)
    grads = [g for g, _ in opt.compute_gradients(loss, [w, b])]
    pairs = list(zip(_gc_clip(clip, grads), [w, b]))
    losses = []
    for _ in range(STEPS):
        losses.append(float(loss.numpy()))
        opt.apply_gradients(pairs)
    assert_matches(losses, {"w": w.numpy(), "b": b.numpy()}, references(optimizer, clip, dtype), dtype)


def test_sgd_takes_lr_0_1_as_float32_0_1_on_float64_variables():
    # the README's clip_by_norm_sgd_step: gradients (9, 12) clipped to (5, 5); TF moves each by
    # 5 * float32(0.1), not by 0.5 (numbers from real TensorFlow 2.21)
    w, x = tf.Variable(2.0, dtype=tf.float64), tf.Variable(3.0, dtype=tf.float64)
    tf.compat.v1.train.GradientDescentOptimizer(0.1).apply_gradients(
        [(tf.constant(5.0, tf.float64), w), (tf.constant(5.0, tf.float64), x)])
    assert (w.numpy(), x.numpy()) == (1.4999999925494194, 2.4999999925494194)
    result = runner.run(load("""
inputs: {w: 2.0, x: 3.0}
outputs: {loss: w * x * x}
train: {loss: loss, optimizer: {name: sgd, lr: 0.1}, clip: {norm: 5}}
""", "sgd-step"))
    assert (result.train.final["w"], result.train.final["x"]) == (1.4999999925494194, 2.4999999925494194)


def test_a_learning_rate_beyond_float32_is_refused_as_tf_train_refuses_it():
    w = tf.Variable(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="out of range"):
        tf.compat.v1.train.GradientDescentOptimizer(1e39).apply_gradients(
            [(tf.constant([1.0, 0.0], tf.float64), w)])
    with pytest.raises(GradcliError, match=r"learning_rate=1e\+39 is beyond float32's range"):
        gc.train.GradientDescentOptimizer(1e39)


def test_an_epsilon_below_float32_becomes_zero_as_in_tf():
    # 1e-50 is 0 in float32: a zero gradient's Adam step is 0 / (sqrt(0) + 0) = NaN in TF too
    w = tf.Variable(np.array([1.0, 2.0]))
    tf.compat.v1.train.AdamOptimizer(0.1, epsilon=1e-50).apply_gradients(
        [(tf.constant([1.0, 0.0], tf.float64), w)])
    v = gc.variable([1.0, 2.0])
    gc.train.AdamOptimizer(0.1, epsilon=1e-50).apply_gradients([(gc.constant([1.0, 0.0]), v)])
    np.testing.assert_array_equal(v.numpy(), w.numpy())
    assert np.isnan(v.numpy()[1])
