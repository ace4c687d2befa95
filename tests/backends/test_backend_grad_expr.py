"""grad(y, x) in expressions and functions with their own let, on every backend, against torch
(torch.autograd.grad with create_graph=True) and TensorFlow (nested GradientTape,
tf.custom_gradient) written here: second derivatives, a Hessian-vector product, gradient
penalties through override_map and custom gradients, and training on a penalty."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
import torch
from backend_helpers import load

from gradcli import runner

TOL = dict(rtol=1e-9, atol=1e-12)


def run(text: str, backend: str, numeric: bool = True):
    return runner.run(load(text), backend=backend, numeric=numeric)


def t64(values, grad: bool = True):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=grad)


def close(actual, expected, **tol) -> None:
    np.testing.assert_allclose(np.asarray(actual, np.float64),
                               np.asarray(expected, np.float64), **(tol or TOL))


def grad(y, x):
    """d(sum y)/dx, differentiable again; zeros where x does not reach y."""
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True, allow_unused=True)
    return torch.zeros_like(x) if g is None else g


# ----- a second (and third) derivative of a scalar function -----
SCALAR = """
inputs:
  x: 0.7
let:
  y: x ** 3 * sin(x) + exp(-x)
  d1: grad(y, x)
outputs:
  d2: grad(d1, x)
"""


def test_second_derivative_of_a_scalar_function(backend):
    result = run(SCALAR, backend)
    x = t64(0.7)
    y = x ** 3 * torch.sin(x) + torch.exp(-x)
    d1 = grad(y, x)
    d2 = grad(d1, x)
    (d3,) = torch.autograd.grad(d2, x)
    close(result.values["d1"], d1.detach())
    close(result.values["d2"], d2.detach())
    row = result.gradients["d2"]["x"]
    close(row.overridden, d3)
    close(row.true, d3)  # no override anywhere: the true pass is the same derivative
    close(row.numeric, d3, rtol=1e-6, atol=1e-7)


# ----- a Hessian-vector product -----
HVP = """
inputs:
  x: [0.3, -1.2, 0.8]
  a: [[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]]
  v: {value: [1.0, -2.0, 0.5], trainable: false}
let:
  y: sum(tanh(a @ x) ** 2) + sum(x ** 4) / 4
  g: grad(y, x)
outputs:
  hvp: grad(sum(g * v), x)
"""


def test_hessian_vector_product(backend):
    result = run(HVP, backend)
    x, a = t64([0.3, -1.2, 0.8]), t64([[1.0, -0.5, 0.25], [0.5, 2.0, -1.0]])
    v = t64([1.0, -2.0, 0.5], grad=False)
    y = (torch.tanh(a @ x) ** 2).sum() + (x ** 4).sum() / 4
    g = grad(y, x)
    hvp = grad((g * v).sum(), x)
    hessian = torch.autograd.functional.hessian(
        lambda x_: (torch.tanh(a.detach() @ x_) ** 2).sum() + (x_ ** 4).sum() / 4, x.detach())
    close(hvp.detach(), hessian @ v)  # the oracle itself, checked once more
    close(result.values["g"], g.detach())
    close(result.values["hvp"], hvp.detach())
    dx, da = torch.autograd.grad(hvp.sum(), [x, a])
    close(result.gradients["hvp"]["x"].overridden, dx)
    close(result.gradients["hvp"]["a"].overridden, da)
    close(result.gradients["hvp"]["a"].numeric, da, rtol=1e-6, atol=1e-7)


# ----- a gradient penalty -----
PENALTY = """
inputs:
  x: {value: [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]], trainable: false}
  w: [[0.4, -0.7, 1.1], [0.9, 0.3, -0.5]]
let:
  d: sum(softplus(x @ w))
outputs:
  penalty: sum(grad(d, x) ** 2)
"""


def test_gradient_penalty(backend):
    result = run(PENALTY, backend)
    x = t64([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]])
    w = t64([[0.4, -0.7, 1.1], [0.9, 0.3, -0.5]])
    d = torch.nn.functional.softplus(x @ w).sum()
    penalty = (grad(d, x) ** 2).sum()
    (dw,) = torch.autograd.grad(penalty, w)
    close(result.values["penalty"], penalty.detach())
    row = result.gradients["penalty"]["w"]
    close(row.overridden, dw)
    close(row.true, dw)
    close(row.numeric, dw, rtol=1e-6, atol=1e-7)


# ----- grad() through an override_map (straight-through sign) -----
STE = """
inputs:
  x: [-1.5, -0.3, 0.4, 2.0]
  w: [0.5, -1.0, 2.0, 1.5]
override_map:
  sign: hardtanh
let:
  d: sum(sign(x) * w * x)
  g: grad(d, x)
outputs:
  penalty: sum(g ** 2)
"""


def _tf_ste_penalty(x_value, w_value):
    """Nested tapes, sign with TensorFlow's own custom gradient (hard-tanh straight-through)."""
    @tf.custom_gradient
    def ste_sign(x):
        def backward(dy):
            return tf.where(tf.abs(x) <= 1, dy, tf.zeros_like(dy))
        return tf.sign(x), backward

    x, w = tf.constant(x_value, tf.float64), tf.constant(w_value, tf.float64)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, w])
        with tf.GradientTape() as inner:
            inner.watch(x)
            d = tf.reduce_sum(ste_sign(x) * w * x)
        g = inner.gradient(d, x)
        penalty = tf.reduce_sum(g ** 2)
    return g.numpy(), penalty.numpy(), [t.numpy() for t in outer.gradient(penalty, [x, w])]


def test_grad_through_an_override(backend):
    xs, ws = [-1.5, -0.3, 0.4, 2.0], [0.5, -1.0, 2.0, 1.5]
    result = run(STE, backend)
    g, penalty, (dx, dw) = _tf_ste_penalty(xs, ws)
    close(result.values["g"], g)
    close(result.values["penalty"], penalty)
    # overridden: the override holds on both levels, as in TensorFlow
    close(result.gradients["penalty"]["x"].overridden, dx)
    close(result.gradients["penalty"]["w"].overridden, dw)
    # true: grad()'s value as written (the straight-through gradient), differentiated exactly
    x, w = t64(xs), t64(ws)
    written = w * x * (x.abs() <= 1) + torch.sign(x) * w
    true_dx, true_dw = torch.autograd.grad((written ** 2).sum(), [x, w])
    close(result.gradients["penalty"]["x"].true, true_dx)
    close(result.gradients["penalty"]["w"].true, true_dw)
    close(result.gradients["penalty"]["x"].numeric, true_dx, rtol=1e-6, atol=1e-7)
    assert not np.allclose(true_dx, dx)  # the two passes do differ here


# ----- grad() through a function with its own let -----
FUNCTION = """
inputs:
  x: [-1.2, 0.1, 0.9, 2.5]
functions:
  swishish:
    args: [x]
    let: {s: sigmoid(x)}
    forward: s * x
    gradient: [dy * s]
let:
  g: grad(sum(swishish(x) * x), x)
outputs:
  penalty: sum(g ** 2)
"""


def _tf_function_penalty(x_value):
    @tf.custom_gradient
    def swishish(x):
        s = tf.sigmoid(x)

        def backward(dy):
            return dy * s  # the closure sees the forward's intermediate
        return s * x, backward

    x = tf.constant(x_value, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(swishish(x) * x)
        g = inner.gradient(y, x)
        penalty = tf.reduce_sum(g ** 2)
    return g.numpy(), penalty.numpy(), outer.gradient(penalty, x).numpy()


def test_grad_through_a_function_with_let(backend):
    xs = [-1.2, 0.1, 0.9, 2.5]
    result = run(FUNCTION, backend)
    g, penalty, dx = _tf_function_penalty(xs)
    close(result.values["g"], g)
    close(result.values["penalty"], penalty)
    close(result.gradients["penalty"]["x"].overridden, dx)
    # true: the custom gradient's value as written (dy * s), differentiated exactly; the
    # outer factor x of swishish(x) * x goes through swishish's real derivative
    x = t64(xs)
    s = torch.sigmoid(x)
    written = s * x + s * x  # d/dx of sum(f(x) * x) = f'(x) x + f(x), with f' := s
    (true_dx,) = torch.autograd.grad((written ** 2).sum(), x)
    close(result.gradients["penalty"]["x"].true, true_dx)
    close(result.gradients["penalty"]["x"].numeric, true_dx, rtol=1e-6, atol=1e-7)


# ----- training on a gradient-penalty loss -----
TRAIN_X = [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8], [1.0, 1.0]]
TRAIN_T = [1.0, -1.0, 0.5, 0.0]
W0 = [0.4, -0.7]
LR, STEPS, LAMBDA = 0.125, 5, 0.5  # 0.125 and 0.5 are exact in float32 (tf.train's lr)
TRAIN = f"""
inputs:
  x: {{value: {TRAIN_X}, trainable: false}}
  t: {{value: {TRAIN_T}, trainable: false}}
  w: {W0}
let:
  z: tanh(x @ w)
  fit: mean((z - t) ** 2)
  slope: grad(sum(z), x)
outputs:
  loss: fit + {LAMBDA} * mean((sqrt(sum(slope ** 2, axis=1)) - 1) ** 2)
train:
  loss: loss
  optimizer: {{name: sgd, lr: {LR}}}
  steps: {STEPS}
"""


def test_training_on_a_gradient_penalty(backend):
    result = run(TRAIN, backend, numeric=False)
    x, t = t64(TRAIN_X), t64(TRAIN_T, grad=False)
    w = t64(W0)
    losses = []
    for _ in range(STEPS):
        z = torch.tanh(x @ w)
        slope = grad(z, x)
        penalty = ((slope.pow(2).sum(dim=1).sqrt() - 1) ** 2).mean()
        loss = ((z - t) ** 2).mean() + LAMBDA * penalty
        losses.append(loss.item())
        (dw,) = torch.autograd.grad(loss, w)
        with torch.no_grad():
            w -= LR * dw
    close(result.train.loss, losses)
    close(result.train.final["w"], w.detach())


# ----- what an unconnected path gives -----
UNCONNECTED = """
inputs:
  x: [-0.5, 0.25, 2.0]
  v: [1.0, 2.0, 3.0]
let:
  steps: grad(sum(cast(x > 0, dtype(x)) * v), x)
  ones: grad(sum(x + v), x)
outputs:
  s: sum(steps)
  o: sum(ones * v)
"""


def test_unconnected_paths(backend):
    result = run(UNCONNECTED, backend)
    x = tf.constant([-0.5, 0.25, 2.0], tf.float64)
    v = tf.constant([1.0, 2.0, 3.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x > 0, tf.float64) * v)
    # TensorFlow gives None without a path; grad() takes UnconnectedGradients.ZERO
    assert tape.gradient(y, x) is None
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x > 0, tf.float64) * v)
    zeros = tape.gradient(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    close(result.values["steps"], zeros.numpy())
    close(result.values["ones"], [1.0, 1.0, 1.0])
    # a grad() result counts as connected to x and to what y reads: zeros, never null
    for out, name, expected in (("s", "x", [0, 0, 0]), ("s", "v", [0, 0, 0]),
                                ("o", "x", [0, 0, 0]), ("o", "v", [1, 1, 1])):
        row = result.gradients[out][name]
        close(row.overridden, expected)
        close(row.true, expected)


# ----- errors, placed -----
HEAD = """inputs:
  x: [1.0, 2.0]
  k: {value: [1, 2], dtype: int64}
"""


@pytest.mark.parametrize("body, where, words", [
    ("outputs:\n  y: sum(grad(cast(x, int64), x))\n", "spec.yaml:5:15", "y is int64"),
    ("let:\n  z: x * 2\noutputs:\n  y: sum(grad(sum(z), x * 2))\n", "spec.yaml:7:25",
     "grad's x must be the name of an input or a let"),
    ("let:\n  a: x * 2\n  b: exp(k)\noutputs:\n  y: sum(grad(sum(b), a))\n", "spec.yaml:8:23",
     "y does not depend on 'a'"),
    ("outputs:\n  y: sum(grad(sum(x), k))\n", "spec.yaml:5:23", "input 'k' is int64"),
    ("functions:\n  f:\n    args: [a]\n    forward: grad(a * a, a)\n    gradient: dy\noutputs:\n  y: sum(f(x))\n",
     "spec.yaml:7:14", "grad(y, x) can only be used in the spec's let and outputs"),
    ("outputs:\n  y: sum(grad(x))\n", "spec.yaml:5:10", "missing the argument 'x'"),
    ("outputs:\n  y: sum(x)\n  z: grad(y, x)\n", "spec.yaml:6:11", "'y' is an output"),
    ("inputs:\n  grad: 1.0\n", None, "'grad' is grad(y, x)"),
    ("let:\n  h: tanh(x)\noutputs:\n  y: sum(grad(sum(h ** 3), x))\nwrt: [x, h]\n",
     "spec.yaml:8:10", "'h' lies between x and y of a grad(y, x)"),
    ("let:\n  h: tanh(x)\noutputs:\n  y: sum(grad(sum(h ** 3), x))\nstop_gradients: [h]\n",
     "spec.yaml:8:18", "'h' lies between x and y of a grad(y, x)"),
])
def test_errors_are_placed(body, where, words):
    text = HEAD + body if not body.startswith("inputs") else body + "outputs:\n  y: grad\n"
    with pytest.raises(Exception) as info:
        runner.run(load(text), backend="numpy")
    message = str(info.value)
    assert words in message, message
    if where is not None:
        assert message.startswith(where), message


# ----- lets built again for grad() keep their random draws -----
DRAWS = """
inputs:
  x: [0.5, -1.0, 2.0]
let:
  n: x * uniform([3], 0.5, 1.5)
  m: n * normal([3])
  g: grad(sum(m), x)
  later: uniform([2])
outputs:
  y: sum(g * x)
"""


def test_lets_built_again_keep_their_draws(backend):
    result = run(DRAWS, backend, numeric=False)
    values = result.values
    # m = x * u * n, so d(sum m)/dx = u * n = m / x: the same draws, not new ones
    close(values["g"] * np.array([0.5, -1.0, 2.0]), values["m"])
    without = run(DRAWS.replace("  g: grad(sum(m), x)\n", "").replace("sum(g * x)", "sum(m)"),
                  backend, numeric=False)
    close(values["later"], without.values["later"])  # the draws after it are not shifted
    close(result.gradients["y"]["x"].overridden, values["g"])


# ----- a non-finite gradient value says where it was born -----
NONFINITE = """
inputs:
  x: [0.0, 1.0, 4.0]
let:
  g: grad(sum(sqrt(x)), x)
outputs:
  y: sum(g * x)
"""


def test_a_nonfinite_grad_value_is_located(backend):
    result = run(NONFINITE, backend, numeric=False)
    assert np.isposinf(result.values["g"][0]) and np.isnan(result.values["y"])
    close(result.values["g"][1:], 0.5 / np.sqrt([1.0, 4.0]))
    found = [r for r in result.nonfinite if r.phase == "forward" and r.tensor == "g"]
    assert len(found) == 1 and found[0].born == "inf", result.nonfinite
    # the core names the op of the inner gradient, a framework the grad() call around it
    assert found[0].location.startswith("spec.yaml:5:"), found[0]
    assert found[0].expr in ("sqrt(x)", "grad(sum(sqrt(x)), x)"), found[0]


# ----- the bundled experiment's expected numbers are torch's -----
def test_bundled_hvp_experiment_expects_torchs_numbers():
    from pathlib import Path

    from gradcli.spec import load_spec
    path = Path(__file__).parents[2] / "experiments" / "hessian_vector_product.yaml"
    experiment = load_spec(str(path))
    x = t64(experiment.inputs["x"].value)
    a = t64(experiment.inputs["a"].value, grad=False)
    v = t64(experiment.inputs["v"].value, grad=False)

    def y_of(x_):
        return (torch.tanh(a @ x_) ** 2).sum() + (x_ ** 4).sum() / 4

    hessian = torch.autograd.functional.hessian(y_of, x.detach())
    hvp = grad((grad(y_of(x), x) * v).sum(), x)
    (third,) = torch.autograd.grad(hvp.sum(), x)
    expect = experiment.expect
    close(expect.values["hvp"], hessian @ v)
    close(expect.values["hvp"], hvp.detach())
    close(expect.values["g"], grad(y_of(x), x).detach())
    close(expect.gradients["hvp"]["x"], third)
    assert runner.run(experiment, backend="numpy").expect.passed


def test_grad_order_and_calls_are_bounded():
    lets = "".join(f"  g{i}: grad(sum(g{i - 1} ** 2), x)\n" for i in range(1, 5))
    text = HEAD + "let:\n  g0: x ** 3\n" + lets + "outputs:\n  y: sum(g4)\n"
    runner.run(load(text), backend="numpy", numeric=False)  # order 4: allowed
    deeper = text.replace("  y: sum(g4)", "  y: sum(grad(sum(g4), x))")
    with pytest.raises(Exception, match="order 5 .*the limit is 4") as info:
        load(deeper)
    assert str(info.value).startswith("spec.yaml:11:15"), str(info.value)
    many = HEAD + "outputs:\n" + "".join(f"  y{i}: grad(x * {i}, x)\n" for i in range(65))
    with pytest.raises(Exception, match="at most 64 times"):
        load(many)


# ----- the examples of docs/spec.md's grad() section run, with the numbers torch gives -----
def _doc_examples() -> list[str]:
    from pathlib import Path
    text = (Path(__file__).parents[2] / "docs" / "spec.md").read_text()
    section = text[text.index("## Gradients as values"):text.index("## Training\n")]
    return [block.split("```", 1)[0] for block in section.split("```yaml\n")[1:]]


def test_doc_examples_run(backend):
    hvp_spec, train_spec, swish_spec = _doc_examples()
    hvp = run(hvp_spec, backend, numeric=False)
    close(hvp.values["hvp"], [-1.0676413048433786, -7.653957846099831, 0.4669789230499156])
    trained = run(train_spec, backend, numeric=False)
    assert trained.train.loss[-1] < trained.train.loss[0]
    swish = run(swish_spec, backend, numeric=False)
    x = t64([-1.5, 0.2, 2.0])
    s = torch.sigmoid(x)
    (curvature,) = torch.autograd.grad((s + x * s * (1 - s)).sum(), x)  # d/dx of the gradient
    close(swish.values["curvature"], curvature)
    close(swish.gradients["y"]["x"].overridden, (s + x * s * (1 - s)).detach())


# ----- with a data set and an override: a penalty on the features' gradient -----
ROWS = [[0.5, -1.0, 0], [1.5, 0.2, 1], [-0.3, 0.8, 0], [1.0, 1.0, 1], [-1.2, 0.4, 0]]
DATA_SPEC = """
data: {load: rows.csv, features: X, labels: y}
inputs:
  w: [0.5, -0.25]
  b: 0.1
override_map:
  round: identity
let:
  z: matmul(X, round(w * 4) / 4) + b
  slope: grad(sum(sigmoid(z)), X)
outputs:
  loss: mean(softplus(z) - cast(y, dtype(z)) * z) + 0.25 * mean(sum(slope ** 2, axis=1))
"""


def test_penalty_on_data_features_through_an_override(backend, tmp_path):
    (tmp_path / "rows.csv").write_text("x1,x2,label\n" + "".join(
        f"{a},{b},{c}\n" for a, b, c in ROWS))
    (tmp_path / "gp.yaml").write_text(DATA_SPEC)
    from gradcli.spec import load_spec
    result = runner.run(load_spec(str(tmp_path / "gp.yaml")), backend=backend, numeric=False)

    class RoundSTE(torch.autograd.Function):  # round forward, identity backward
        @staticmethod
        def forward(ctx, v):
            return torch.round(v)

        @staticmethod
        def backward(ctx, g):
            return g

    x = t64([r[:2] for r in ROWS])  # every row is in the first batch: means do not see order
    labels = t64([r[2] for r in ROWS], grad=False)
    w, b = t64([0.5, -0.25]), t64(0.1)
    z = x @ (RoundSTE.apply(w * 4) / 4) + b
    slope = grad(torch.sigmoid(z), x)
    loss = (torch.nn.functional.softplus(z) - labels * z).mean() \
        + 0.25 * slope.pow(2).sum(dim=1).mean()
    dw, db = torch.autograd.grad(loss, [w, b])
    close(result.values["loss"], loss.detach())
    close(result.gradients["loss"]["w"].overridden, dw)
    close(result.gradients["loss"]["b"].overridden, db)
