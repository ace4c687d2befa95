"""The spec constructs on every framework: the numpy core's numbers, its errors, and the notes
where a framework's own convention would give something else."""
from __future__ import annotations

import numpy as np
import pytest
from backend_helpers import differences, load

from gradcli import backends, runner
from gradcli.errors import SpecError

SPECS = {
    # gradients w.r.t. lets, one of them stopped (treated as a constant, its partial asked for)
    "stopped_lets": """
inputs:
  x: [1.0, -2.0, 3.0]
  w: [0.5, 1.5, -1.0]
let:
  h: tanh(x * w)
  g: h * h
  k: g + sin(h)
outputs:
  y: sum(k * x) + sum(h)
wrt: [x, w, h, g]
stop_gradients: [g]
""",
    # a second name for the same tensor is the same tensor
    "alias": """
inputs:
  a: [1.0, 2.0]
let:
  b: a
  c: b * 3
outputs:
  y: sum(c * a)
wrt: [a, b, c]
""",
    # scoped overrides, a registered rule, a built-in one and a mul override with 2 inputs
    "scoped": """
inputs:
  x: [0.2, -0.7, 1.4]
register:
  Twice: 2 * dy
let:
  p: identity(x) * x
  q: identity(x) * x
override_map:
  - {op: identity, gradient: Twice, scope: [q]}
  - {op: Mul, gradient: hardtanh, scope: [p]}
outputs:
  y: sum(p + q)
""",
    # overrides of two-output ops see dy0 (and zeros/None for the integer output)
    "two_outputs": """
inputs:
  x: [[1.0, 5.0, 2.0], [4.0, 3.0, 0.5]]
register:
  ArgGrad: ones_like(x) * sum(dy0) * 3
  ZOGrad: dy0 + 1
let:
  "m, i": max_with_argmax(x, axis=1)
  "z, j": zero_out(x)
override_map:
  max_with_argmax: ArgGrad
  zero_out: ZOGrad
outputs:
  y: sum(m * m) + sum(z)
""",
    # a function with its own gradient (none for one argument), called twice
    "function": """
inputs:
  x: [0.3, -1.2, 2.0]
  s: [2.0, 3.0, 4.0]
functions:
  scaled:
    args: [a, b]
    forward: a * b + exp(a)
    gradient: [dy * 10, none]
outputs:
  y: sum(scaled(x, s) * s)
  z: sum(scaled(x * x, 2.0))
""",
    # a rule on a broadcasting op reduces its own gradient to the input's shape (spec-v1: any
    # shape but the input's or a scalar's is an error, never summed silently)
    "broadcast_rule": """
inputs:
  x: [[1.0, 2.0], [3.0, 4.0]]
  b: [0.5, -0.5]
register:
  Wide: [dy * 2, "sum(dy, axis=0)"]
override_map:
  add: Wide
outputs:
  y: sum(square(x + b))
""",
    "random_draws": """
seed: 3
inputs:
  x: [1.0, 2.0, 3.0]
let:
  r: uniform([3], -1, 1)
  n: normal([3], 0, 2)
  m: bernoulli([3], 0.5)
outputs:
  y: sum(x * r + n * x * m)
""",
    "indexing": """
inputs:
  x: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
outputs:
  y: sum(x[[0, 1, 1], [2, 0, 0]] * 3) + sum(x[:, 1:] ** 2) + x[1, -1] + sum(transpose(x)[0])
""",
    "ops": """
inputs:
  x: [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
  labels: {value: [2, 0], dtype: int64}
let:
  lp: log_softmax(x, axis=1)
  sm: softmax(x, axis=0)
outputs:
  nll: -sum(lp * one_hot(labels, 3))
  reduce: sum(sm * x) + prod(x, axis=1)[0] + max(x) + min(x, axis=0)[1] + logsumexp(x)
  shape: sum(reshape(x, [3, 2])[1]) + sum(concat([x, x * 2], axis=1)) + sum(stack([x[0], x[1]], axis=1))
  select: sum(where(x > 0, sqrt(abs(x)), relu(x) + sigmoid(x))) + mean(cast(x > 0, dtype(x)) * x)
  control: sum(reverse_gradient(x, scale=2.0) * stop_gradient(x))
  smooth: sum(softplus(x) / (1 + square(x))) + sum(matmul(x, transpose(x)))
""",
    "ties": """
inputs:
  x: [1.0, 2.0, 3.0]
  y: [1.0, 1.0, 4.0]
outputs:
  z: sum(maximum(x, y) * 2 + minimum(x, y)) + sum(clip(x, 1.0, 2.0))
""",
    "train_momentum_value_clip": """
inputs:
  w: [1.0, -2.0, 0.5]
  x: {value: [0.3, 0.2, -0.1], trainable: false}
outputs:
  loss: sum(square(w * x - 1)) + sum(abs(w))
train:
  loss: loss
  optimizer: {name: momentum, lr: 0.1, momentum: 0.9}
  clip: {value: [-0.5, 0.5]}
  steps: 5
""",
    "train_adam_global_norm": """
inputs:
  w: [1.0, -2.0, 0.5]
  b: 0.3
outputs:
  loss: sum(softplus(w * b) ** 2) + logsumexp(w)
train:
  loss: loss
  optimizer: {name: adam, lr: 0.05}
  clip: {global_norm: 0.5}
  steps: 7
""",
    "train_nesterov_norm": """
inputs:
  w: [[1.0, -2.0], [0.5, 3.0]]
  v: [0.1, 0.2]
outputs:
  loss: sum(matmul(w, v) ** 2) + mean(v * v)
train:
  loss: loss
  optimizer: {name: momentum, lr: 0.01, momentum: 0.5, nesterov: true}
  clip: {norm: 0.3}
  steps: 4
""",
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_construct_matches_the_numpy_core(framework, name, dtype):
    experiment = load(SPECS[name], name, dtype)
    reference = runner.run(experiment, backend="numpy")
    assert differences(runner.run(experiment, backend=framework), reference) == []


def gradients(framework, text, kind="overridden"):
    return backends.build(load(text), framework).gradients(kind)


def test_stopped_let_gets_its_partial_derivative(framework):
    spec = """
inputs:
  a: 0.0
let:
  b: 2 * a
outputs:
  y: a + b * b + b
wrt: [a, b]
stop_gradients: [b]
"""
    got = gradients(framework, spec)["y"]
    assert (float(got["a"]), float(got["b"])) == (1.0, 1.0)  # 2b + 1 at b = 0, and a's own 1


def test_gradient_with_respect_to_an_intermediate_keeps_signed_zeros(framework):
    # The probe added to b is -0.0, so 1 / b still sees -0.0 and gives -inf in the forward.
    spec = """
inputs:
  a: -0.0
let:
  b: a * 1.0
outputs:
  y: 1 / b
wrt: [b]
"""
    program = backends.build(load(spec), framework)
    assert program.values()["y"] == -np.inf
    assert program.gradients("overridden")["y"]["b"] == -np.inf


def test_scoped_override_counts_each_entry(framework):
    program = backends.build(load(SPECS["scoped"]), framework)
    assert [(e.op.lower(), n) for e, n in program.override_matches] == [("identity", 1), ("mul", 1)]
    x = np.array([0.2, -0.7, 1.4])
    # p = identity(x) * x with mul's gradient hardtanh (first input only): 1 where |x| <= 1;
    # q = identity(x) * x with identity doubled: 2x through identity, x directly.
    np.testing.assert_allclose(program.gradients("overridden")["y"]["x"],
                               (np.abs(x) <= 1) + 3 * x)
    np.testing.assert_allclose(program.gradients("true")["y"]["x"], 4 * x)


def test_function_gradient_none_leaves_argument_unconnected(framework):
    table = gradients(framework, SPECS["function"])
    x, s = np.array([0.3, -1.2, 2.0]), np.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(table["y"]["x"], 10 * s)  # the function's dy * 10, with dy = s
    np.testing.assert_allclose(table["y"]["s"], x * s + np.exp(x))  # only through "* s"
    assert table["z"]["s"] is None


def test_unconnected_error_names_the_input(framework):
    spec = """
inputs:
  x: [1.0]
  u: [2.0]
outputs:
  y: sum(x)
wrt: [x, u]
unconnected: error
"""
    with pytest.raises(SpecError, match=r"output 'y': u is not connected to the outputs"):
        runner.run(load(spec, "unconnected"), backend=framework)


def test_registered_gradient_of_the_wrong_shape_is_an_error(framework):
    spec = """
inputs:
  x: [1.0, 2.0, 3.0]
register:
  Bad: dy[0:2]
override_map:
  exp: Bad
outputs:
  y: sum(exp(x))
"""
    with pytest.raises(SpecError, match=r"gradient 'Bad' for op 'exp' returned shape \(2,\) for "
                                        r"input 0 of shape \(3,\)"):
        runner.run(load(spec, "bad"), backend=framework)


def test_mixing_float_dtypes_is_an_error_as_in_the_core(framework):
    spec = """
inputs:
  x: [1.0, 2.0]
outputs:
  y: sum(cast(x, float64) * x)
"""
    with pytest.raises(SpecError, match="of a float(32|64) tensor and a float(32|64) tensor is not defined"):
        backends.build(load(spec, "mixed", "float32"), framework)


# ----- conventions: where the framework's own answer differs, a note says so -----
def notes(program, topic):
    return [c for c in program.conventions if c.topic == topic]


def test_float32_runs_carry_a_rounding_note(framework):
    program = backends.build(load(SPECS["alias"], "alias", "float32"), framework)
    assert notes(program, "float32")
    assert not notes(backends.build(load(SPECS["alias"]), framework), "float32")


def test_unconnected_convention_note(framework):
    spec = """
inputs:
  x: [0.4, 1.6, -2.5]
  u: [1.0, 2.0, 3.0]
outputs:
  y: sum(round(x) + floor(x) + ceil(x))
wrt: [x, u]
"""
    program = backends.build(load(spec, "rounding"), framework)
    table = program.gradients("overridden")
    np.testing.assert_array_equal(table["y"]["x"], [0.0, 0.0, 0.0])  # connected, zero derivative
    assert table["y"]["u"] is None
    found = {(c.output, c.input) for c in notes(program, "unconnected")}
    if framework == "tensorflow":  # TF registers no gradient for round, floor and ceil: None
        assert ("y", "x") in found
    if framework == "jax":  # jax.vjp gives zeros for u, which nothing connects
        assert ("y", "u") in found
    if framework == "torch":
        assert not found


def test_tie_notes_only_for_frameworks_that_split_ties(framework):
    program = backends.build(load(SPECS["ties"]), framework)
    topics = {c.topic for c in program.conventions}
    assert ("maximum" in topics) == (framework in ("torch", "jax"))
    assert ("clip" in topics) == (framework == "jax")
    # every backend reports TensorFlow's convention: a tie sends all of the gradient to x
    # (maximum * 2: [2, 2, 0]; minimum: [1, 0, 1]; clip to [1, 2], bounds included: [1, 1, 0])
    np.testing.assert_allclose(program.gradients("overridden")["z"]["x"], [4.0, 3.0, 1.0])
    np.testing.assert_allclose(program.gradients("overridden")["z"]["y"], [0.0, 1.0, 2.0])


def test_pow_note_only_for_a_differentiated_exponent(framework):
    literal = backends.build(load("inputs:\n  x: [-2.0, 3.0]\noutputs:\n  y: sum(x ** 2)\n"),
                             framework)
    assert not notes(literal, "pow")
    spec = "inputs:\n  x: [-2.0, 3.0]\n  p: [2.0, 0.5]\noutputs:\n  y: sum(x ** p)\n"
    program = backends.build(load(spec), framework)
    dp = program.gradients("overridden")["y"]["p"]
    if framework == "tensorflow":
        assert not notes(program, "pow") and dp[0] == 0.0  # TensorFlow's (and the core's) 0
    else:
        assert notes(program, "pow") and np.isnan(dp[0])


def test_pow_note_goes_on_the_exponent_row_only(framework):
    # review7 finding 4: the note is about dy/dp (NaN in torch and jax), never dy/dx
    spec = "inputs:\n  x: [-1.0, 2.0]\n  p: [2.0, 2.0]\noutputs:\n  y: sum(pow(x, p))\n"
    program = backends.build(load(spec), framework)
    placed = {(c.input, c.elements, c.kind) for c in notes(program, "pow")}
    grads = program.gradients("overridden")["y"]
    np.testing.assert_allclose(grads["x"], [-2.0, 4.0])  # 2x, a number in every framework
    if framework == "tensorflow":
        assert not placed and grads["p"][0] == 0.0
    else:
        assert placed == {("p", (0,), "nonfinite")} and np.isnan(grads["p"][0])


def test_torch_notes_its_own_norm_clipping_and_adam(framework):
    program = backends.build(load(SPECS["train_adam_global_norm"]), framework)
    program.train()
    clipping, adam = notes(program, "clipping"), notes(program, "adam")
    if framework == "torch":
        assert len(clipping) == 1 and "1e-06" in clipping[0].text
        assert "max |diff|" in clipping[0].text and len(adam) == 1
    else:
        assert not clipping and len(adam) == 1
