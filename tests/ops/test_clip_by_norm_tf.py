"""clip_by_norm in the spec language against TensorFlow 2.21's tf.clip_by_norm, called here
(values and tf.GradientTape gradients, with respect to t and to clip_norm), and against the
same function written out by hand in torch: at the edges (all-zero t, the norm exactly at
clip_norm, a negative or -0.0 clip_norm, inf and NaN elements, a sum of squares that
overflows, axes with a zero row, empty axes), in float32 and float64, on every backend. Each
(dtype, backend) pair is one spec holding every case, so TensorFlow runs once per dtype.
Then clip_by_norm(dy, 1) as a registered gradient, against tf.custom_gradient.
"""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest
import torch
from available import backend_params

from gradcli import runner
from gradcli.spec import load_spec_text

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

INF, NAN = np.inf, np.nan
# (t, clip_norm, axes); a clip_norm is written as a number literal (TF's Python-number
# branch) and, in a second output, passed as an input (its tensor branch, with a gradient).
CASES = [
    ([3.0, 4.0], 2.5, None),                          # above: scaled down
    ([0.3, -0.4, 0.1], 2.0, None),                    # below: unchanged, gradient through the norm
    ([3.0, 4.0], 5.0, None),                          # the norm exactly at clip_norm: a tie
    ([0.0, 0.0, 0.0], 1.0, None),                     # all zero: the two-tap where, finite gradient
    ([0.0, 0.0], 0.0, None),                          # 0 / 0: NaN, as TF
    ([3.0, 4.0], -1.0, None),                         # negative clip_norm: zeros
    ([3.0, -4.0], -0.0, None),                        # -0.0: zeros out (their signs: SIGNLESS)
    ([INF, -2.0, 0.0], 1.0, None),                    # inf element
    ([NAN, 1.0, 0.0], 1.0, None),                     # NaN element
    ([3e30, 4e30], 1.0, None),                        # x * x overflows in float32 only
    ([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4]], 1.0, [1]),  # per row, one of them zero
    ([[3.0, 4.0, 1.0], [-1.0, 0.5, 2.0]], 1.5, [0]),  # per column
    ([[1.0, -2.0], [0.5, 0.0]], 0.75, [0, 1]),        # every axis, listed
    ([[1.0, -2.0], [0.5, 0.0]], 0.75, []),            # no axis: each element its own norm
]
DTYPES = ("float32", "float64")
# relative to each element and to the array's largest finite magnitude (the gradient subtracts
# t * (w . t) / norm**2 from w: summed in another order, the difference is rounding of that)
TOLERANCE = {"float32": 1e-6, "float64": 1e-14}
# The zeros of clip_norm = -0.0 have no sign to compare: TensorFlow's own depends on its eager
# scalar cache (keyed by value, so a -0.0 converted after a 0.0 of the same dtype comes back
# +0.0: tf.constant(-0.0) included), and numpy's maximum(-0.0, 0.0) is +0.0 where TF's kernel
# and the torch and jax backends give -0.0 (docs/ops.md). Their values are compared.
SIGNLESS = {k for k, case in enumerate(CASES) if case[1] == 0 and np.signbit(case[1])}


def weights(k: int, shape) -> np.ndarray:
    """The upstream gradient of case k: fixed, every element different."""
    return np.random.default_rng(k).uniform(0.5, 2.0, shape) * np.where(
        np.arange(int(np.prod(shape))).reshape(shape) % 2, -1.0, 1.0)


def literal(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if np.isnan(value):
        return ".nan"
    if np.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(float(value))


def spec_text(dtype: str) -> str:
    inputs, outputs, grad_ys = [], [], []
    for k, (t, c, axes) in enumerate(CASES):
        axes_text = "" if axes is None else f", axes={axes}"
        inputs += [f"  t{k}: {literal(t)}", f"  c{k}: {literal(c)}"]
        w = literal(weights(k, np.shape(t)).tolist())
        outputs += [f"  n{k}: clip_by_norm(t{k}, {literal(c)}{axes_text})",
                    f"  v{k}: clip_by_norm(t{k}, c{k}{axes_text})"]
        grad_ys += [f"  n{k}: {w}", f"  v{k}: {w}"]
    return "\n".join([f"dtype: {dtype}", "inputs:", *inputs, "outputs:", *outputs,
                      "grad_ys:", *grad_ys]) + "\n"


@functools.lru_cache(maxsize=None)
def tensorflow_reference(dtype: str) -> dict:
    """{output name: (value, {input: gradient})} from tf.clip_by_norm and tf.GradientTape."""
    found = {}
    for k, (t, c, axes) in enumerate(CASES):
        tt = tf.constant(t, dtype)
        ct = tf.constant(c, dtype)
        w = tf.constant(weights(k, np.shape(t)), dtype)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([tt, ct])
            by_number = tf.clip_by_norm(tt, c, axes=axes)
            by_tensor = tf.clip_by_norm(tt, ct, axes=axes)
        found[f"n{k}"] = (by_number.numpy(),
                          {f"t{k}": tape.gradient(by_number, tt, output_gradients=w).numpy()})
        grads = tape.gradient(by_tensor, [tt, ct], output_gradients=w)
        found[f"v{k}"] = (by_tensor.numpy(), {f"t{k}": grads[0].numpy(), f"c{k}": grads[1].numpy()})
    return found


def torch_clip_by_norm(t, clip_norm, axes):
    """tf.clip_by_norm's definition written out in torch: t * c / max(norm, c), with c = max(c,
    0), the norm's square root taken only where the sum of squares is positive, and a tie of
    the norm and c sending the gradient to the norm and a NaN norm staying NaN (TensorFlow's
    maximum)."""
    # max(c, 0), its gradient to c where c >= 0; + 0.0 makes a -0.0 the +0.0 TF's kernel gives
    c = torch.where(clip_norm >= 0, clip_norm, torch.zeros_like(clip_norm)) + 0.0
    dims = tuple(range(t.ndim)) if axes is None else tuple(axes)
    l2sum = (t * t).sum(dim=dims, keepdim=True) if dims else t * t
    positive = l2sum > 0
    l2norm = torch.where(positive, torch.sqrt(torch.where(positive, l2sum, torch.ones_like(l2sum))),
                         l2sum)
    return t * c / torch.where((l2norm >= c) | torch.isnan(l2norm), l2norm, c)


def torch_reference(dtype: str) -> dict:
    found = {}
    kind = getattr(torch, dtype)
    for k, (t, c, axes) in enumerate(CASES):
        tt = torch.tensor(t, dtype=kind, requires_grad=True)
        ct = torch.tensor(c, dtype=kind, requires_grad=True)
        y = torch_clip_by_norm(tt, ct, axes)
        gt, gc_ = torch.autograd.grad(y, [tt, ct], torch.tensor(weights(k, np.shape(t)), dtype=kind))
        found[f"v{k}"] = (y.detach().numpy(), {f"t{k}": gt.numpy(), f"c{k}": gc_.numpy()})
    return found


def mismatches(label, got, expected, dtype: str, signs: bool = True) -> list[str]:
    """[] when got is expected: same dtype, within a few ulps, NaN where NaN, inf where inf,
    and (signs) the same sign of every zero."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype != np.dtype(dtype):
        return [f"{label}: {got.dtype} {got.shape}, expected {dtype} {expected.shape}"]
    finite = np.abs(expected[np.isfinite(expected)])
    scale = float(finite.max()) if finite.size else 0.0
    rtol = TOLERANCE[dtype]
    same = np.isclose(got, expected, rtol=rtol, atol=rtol * scale, equal_nan=True)
    same &= np.isinf(got) == np.isinf(expected)
    zeros = (got == 0) & (expected == 0)
    if signs:
        same &= ~zeros | (np.signbit(got) == np.signbit(expected))
    return [] if same.all() else [f"{label}: {got.ravel().tolist()}, expected "
                                  f"{expected.ravel().tolist()}"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_torch_oracle_agrees_with_tensorflow(dtype):
    # two oracles that share nothing but the definition: TF's composite and the torch one above
    reference, by_hand = tensorflow_reference(dtype), torch_reference(dtype)
    failures = []
    for name, (value, grads) in by_hand.items():
        signs = int(name[1:]) not in SIGNLESS
        failures += mismatches(f"torch {name}", value, reference[name][0], dtype, signs)
        for wrt, g in grads.items():
            failures += mismatches(f"torch d{name}/d{wrt}", g, reference[name][1][wrt], dtype, signs)
    assert not failures, "\n".join(failures)


def test_tensorflow_gives_what_the_docs_say_at_the_edges():
    # the facts docs/ops.md states, read from TensorFlow itself
    reference = tensorflow_reference("float64")
    value, grads = reference["v3"]  # all zero: unchanged, gradient w (clip_norm / clip_norm)
    assert np.array_equal(value, [0.0, 0.0, 0.0])
    assert np.array_equal(grads["t3"], weights(3, (3,)))
    value, grads = reference["v2"]  # at the tie the gradient flows through the norm
    w = weights(2, (2,))
    assert np.allclose(grads["t2"], w - np.array([3.0, 4.0]) * (w @ [3.0, 4.0]) / 25, rtol=1e-15)
    assert np.allclose(grads["c2"], w @ [3.0, 4.0] / 5, rtol=1e-15)  # through t * clip_norm
    assert np.isnan(reference["n4"][0]).all() and np.isnan(reference["n4"][1]["t4"]).all()
    assert np.array_equal(reference["v5"][1]["c5"], 0.0)  # a negative clip_norm gets none


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_by_norm_matches_tensorflow_and_torch(dtype, backend):
    reference = tensorflow_reference(dtype)
    with np.errstate(all="ignore"):
        result = runner.run(load_spec_text(spec_text(dtype), path="clip.yaml"), backend=backend,
                            numeric=False)
    failures = []
    for name, (value, grads) in reference.items():
        signs = int(name[1:]) not in SIGNLESS
        failures += mismatches(f"{name} value", result.values[name], value, dtype, signs)
        for wrt, g in grads.items():
            got = result.gradients[name][wrt].overridden
            failures += mismatches(f"d{name}/d{wrt}", got, g, dtype, signs)
            failures += mismatches(f"d{name}/d{wrt} (true)", result.gradients[name][wrt].true, g,
                                   dtype, signs)
    for name, (value, grads) in torch_reference(dtype).items():
        signs = int(name[1:]) not in SIGNLESS
        failures += mismatches(f"{name} value vs torch", result.values[name], value, dtype, signs)
        for wrt, g in grads.items():
            failures += mismatches(f"d{name}/d{wrt} vs torch",
                                   result.gradients[name][wrt].overridden, g, dtype, signs)
    assert not failures, "\n".join(failures)


# ----- clip_by_norm(dy, 1) as a gradient override -----
X = [[3.0, -1.0, 0.5], [0.2, 0.1, -0.3], [0.0, 2.0, 0.0]]
W = [[4.0, 1.0, -2.0], [0.1, 0.2, -0.1], [0.0, 0.0, 0.0]]  # square's upstream gradient
OVERRIDE_SPEC = f"""\
dtype: {{dtype}}
inputs:
  x: {X}
  w: {W}
register:
  ClipGrad: clip_by_norm(dy, 1, axes=[1])
override_map:
  square: ClipGrad
outputs:
  y: sum(square(x) * w)
"""


@functools.lru_cache(maxsize=None)
def tensorflow_override(dtype: str):
    @tf.custom_gradient
    def square(x):  # tf.square whose gradient is its upstream gradient, clipped per row
        return tf.square(x), lambda dy: tf.clip_by_norm(dy, 1.0, axes=[1])

    x, w = tf.constant(X, dtype), tf.constant(W, dtype)
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = tf.reduce_sum(square(x) * w)
    return y.numpy(), [g.numpy() for g in tape.gradient(y, [x, w])]


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_by_norm_as_a_registered_gradient_matches_tf_custom_gradient(dtype, backend):
    value, (gx, gw) = tensorflow_override(dtype)
    # the first row of w (norm sqrt(21)) is clipped, the second (below 1) and the zero row not
    assert np.allclose(gx, np.asarray(W) / [[np.sqrt(21.0)], [1.0], [1.0]], rtol=1e-6)
    result = runner.run(load_spec_text(OVERRIDE_SPEC.format(dtype=dtype), path="override.yaml"),
                        backend=backend, numeric=False)
    x, w = np.asarray(X, dtype), np.asarray(W, dtype)
    failures = (mismatches("y", result.values["y"], value, dtype)
                + mismatches("dy/dx", result.gradients["y"]["x"].overridden, gx, dtype)
                + mismatches("dy/dw", result.gradients["y"]["w"].overridden, gw, dtype)
                + mismatches("true dy/dx", result.gradients["y"]["x"].true, w * (x * 2), dtype))
    assert not failures, "\n".join(failures)
