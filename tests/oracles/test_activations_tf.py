"""The ops grown on the table (log1p ... heaviside) at their edges against TensorFlow 2.21,
called here: values and gradients at 0, -0, +-inf, NaN, huge and tiny values and the kinks,
on the numpy core directly and through a spec on every backend; second derivatives against
central differences of the first; and a surrogate gradient through heaviside, written out
in torch here."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from available import backend_params
from oracle_helpers import check, mismatch, run_spec, tensorflow

import gradcli as gc

tf = tensorflow()

EDGES = np.array([-np.inf, -1e300, -40.0, -6.0, -3.0, -1.0, -0.5, -1e-10, -0.0, 0.0, 1e-10, 0.5,
                  3.0, 6.0, 40.0, 1e155, 1e300, np.inf, np.nan])
TF = {
    "log1p": tf.math.log1p, "expm1": tf.math.expm1, "erf": tf.math.erf, "erfc": tf.math.erfc,
    "atan": tf.math.atan, "asinh": tf.math.asinh, "softsign": tf.nn.softsign,
    "leaky_relu": tf.nn.leaky_relu, "elu": tf.nn.elu, "relu6": tf.nn.relu6,
    "gelu": lambda x: tf.nn.gelu(x, approximate=False), "silu": tf.nn.silu,
    "hard_sigmoid": tf.keras.activations.hard_sigmoid,
    "heaviside": lambda x: tf.cast(x > 0, x.dtype),  # TF has none: its definition, written out
}
# Where TensorFlow itself is wrong, gradcli is not: tf.math.erf is NaN beyond |x| ~ 1e154
# (x * x overflows inside); erf is +-1 there (math.erf, torch, jax).
TF_WRONG = {"erf": (np.abs(EDGES) > 1e154) & ~np.isnan(EDGES)}


def tf_value_and_gradient(name, x):
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = TF[name](xt)
    g = tape.gradient(y, xt, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return y.numpy(), g.numpy()


def expected(name):
    y, g = tf_value_and_gradient(name, EDGES)
    wrong = TF_WRONG.get(name)
    if wrong is not None:
        y = np.where(wrong, np.sign(EDGES), y)
    return y, g


@pytest.mark.parametrize("name", sorted(TF))
def test_the_core_matches_tensorflow_at_the_edges(name):
    y, g = expected(name)
    x = gc.constant(EDGES)
    out = getattr(gc, name)(x)
    got_g = gc.gradients(gc.sum(out), x)[0]
    check(mismatch(f"{name} values", gc.evaluate(out), y)
          + mismatch(f"{name} gradient", gc.evaluate(got_g), g))


def test_tensorflow_erf_really_fails_beyond_1e154_and_gradcli_does_not():
    y, _ = tf_value_and_gradient("erf", np.array([1e155, -1e300, 30.0]))
    assert np.isnan(y[:2]).all() and y[2] == 1.0
    assert gc.evaluate(gc.erf(gc.constant([1e155, -1e300, np.inf]))).tolist() == [1.0, -1.0, 1.0]


SPEC = """
dtype: float64
inputs:
  x: [-.inf, -1.0e300, -40.0, -6.0, -3.0, -1.0, -0.5, -1.0e-10, -0.0, 0.0, 1.0e-10, 0.5,
      3.0, 6.0, 40.0, 1.0e155, 1.0e300, .inf, .nan]
outputs:
{outputs}
wrt: [x]
unconnected: zero
"""
# torch's and jax's own autodiff differ from TensorFlow's kernels at a few edges, each one a
# note of that backend (as for sqrt or pow): these gradients, and only these, are excused there.
FRAMEWORK_EDGES = {
    ("torch", "softsign"): np.isinf(EDGES), ("jax", "softsign"): np.isinf(EDGES),
    ("torch", "relu6"): np.isnan(EDGES), ("torch", "hard_sigmoid"): np.isnan(EDGES),
    ("jax", "elu"): np.isnan(EDGES),
}


@pytest.mark.parametrize("backend", backend_params())
def test_every_backend_matches_tensorflow_at_the_edges(backend):
    names = sorted(TF)
    result = run_spec(SPEC.format(outputs="\n".join(f"  y_{n}: {n}(x)" for n in names)), backend)
    failures = []
    for name in names:
        y, g = expected(name)
        excused = FRAMEWORK_EDGES.get((backend, name), np.zeros(EDGES.shape, bool))
        failures += mismatch(f"{backend} {name} values", result.values[f"y_{name}"], y)
        got = np.asarray(result.gradients[f"y_{name}"]["x"].overridden)
        failures += mismatch(f"{backend} {name} gradient", got[~excused], g[~excused])
        failures += mismatch(f"{backend} {name} true gradient",
                             np.asarray(result.gradients[f"y_{name}"]["x"].true)[~excused], g[~excused])
        if excused.any() and not any(c.output == f"y_{name}" and c.text.startswith(name)
                                     for c in result.conventions):
            failures.append(f"{backend} {name}: the result does not note the edge")
    check(failures)


SMOOTH = np.array([-2.7, -1.3, -0.4, 0.35, 1.1, 2.9])  # away from every kink
SECOND = sorted(set(TF) - {"heaviside", "relu6", "hard_sigmoid", "leaky_relu"})  # piecewise linear


@pytest.mark.parametrize("name", SECOND)
def test_second_derivatives_match_tensorflow(name):
    x = SMOOTH + 1.5 if name == "log1p" else SMOOTH
    xt = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(xt)
        with tf.GradientTape() as inner:
            inner.watch(xt)
            # TensorFlow has no SoftsignGrad gradient: its formula, for the second derivative
            y = xt / (1 + tf.abs(xt)) if name == "softsign" else TF[name](xt)
        g = inner.gradient(y, xt)
    h = outer.gradient(g, xt).numpy()
    v = gc.constant(x)
    first = gc.gradients(gc.sum(getattr(gc, name)(v)), v)[0]
    second = gc.gradients(gc.sum(first), v)[0]
    check(mismatch(f"{name} second derivative", gc.evaluate(second), h, rtol=1e-8))


def _surrogate_spec() -> str:
    """The example of docs/spec.md, run as written (plus float64)."""
    text = (Path(__file__).parents[2] / "docs" / "spec.md").read_text()
    block = text.split("backward whatever gradient you give it:", 1)[1].split("```yaml", 1)[1]
    return "dtype: float64\n" + textwrap.dedent(block.split("```", 1)[0])


SURROGATE = _surrogate_spec()


@pytest.mark.parametrize("backend", backend_params())
def test_a_surrogate_gradient_through_heaviside_matches_torch(backend):
    """The spike of a surrogate-gradient network: forward heaviside, backward SuperSpike
    (Zenke and Ganguli), against a torch.autograd.Function written here."""
    torch = pytest.importorskip("torch")

    class Spike(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x > 0).to(x.dtype)

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            return dy / (1 + 10 * x.abs()) ** 2

    v = torch.tensor([-1.2, -0.1, 0.0, 0.3, 0.5, 0.9, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0, 1.5, -0.5, 3.0, 1.0], dtype=torch.float64, requires_grad=True)
    y = (Spike.apply(v - 0.5) * w * w).sum()
    gv, gw = torch.autograd.grad(y, [v, w])
    result = run_spec(SURROGATE, backend)
    assert result.values["y"] == pytest.approx(y.item(), rel=1e-12)
    assert result.values["y"] == pytest.approx(3.0 ** 2 + 1.0 ** 2)  # v > 0.5 at 0.9 and 2.0 only
    check(mismatch("d y / d v", result.gradients["y"]["v"].overridden, gv.numpy())
          + mismatch("d y / d w", result.gradients["y"]["w"].overridden, gw.numpy())
          + mismatch("true d y / d v", result.gradients["y"]["v"].true, np.zeros(7)))
