"""Issues 13/14: a gradient set is built when first asked, once (counted, not timed); the
backend reports the seed of its directional checks and the runner projects with it.

Oracles: the derivatives written out in numpy, and the directional projection computed here
with numpy's own generator and least squares."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli import backends, runner
from gradcli.core import registry
from gradcli.spec import load_spec_text

SPEC = """
seed: 3
inputs:
  x: [-2.0, -0.5, 0.25, 1.5]
  w: [1.0, 2.0, 3.0, 4.0]
register:
  Clipped: where((x >= -1) & (x <= 1), dy, zeros_like(dy))
override_map:
  sign: Clipped
let:
  s: sign(x)
outputs:
  y: sum(s * w + x * x)
"""
TRAIN = SPEC + """
train: {loss: y, optimizer: {name: sgd, lr: 0.1}, steps: 3}
"""
X = np.array([-2.0, -0.5, 0.25, 1.5])
W = np.array([1.0, 2.0, 3.0, 4.0])


def _built(text: str):
    return backends.build(load_spec_text(text))


def _overridden(x, w):
    return {"x": np.where(np.abs(x) <= 1, w, 0.0) + 2 * x, "w": np.sign(x)}


def test_nothing_is_built_until_asked_and_each_set_once():
    program = _built(TRAIN)
    program.values()
    program.numeric(2048, 16)  # replays the forward: no gradient graph
    assert program.gradient_builds == {}
    true = program.gradients("true")
    assert program.gradient_builds == {"true": 1}
    np.testing.assert_allclose(true["y"]["x"], 2 * X)
    np.testing.assert_allclose(true["y"]["w"], np.sign(X))
    for _ in range(2):  # asked again: read from the one build
        over = program.gradients("overridden")
        for name, expected in _overridden(X, W).items():
            np.testing.assert_allclose(over["y"][name], expected)
    assert program.gradient_builds == {"true": 1, "overridden": 1}
    # the spec's registered gradient is in the registry only while a set is built
    assert not registry.is_registered("Clipped")


def test_training_alone_builds_only_the_training_gradients():
    program = _built(TRAIN)
    record = program.train()
    assert program.gradient_builds == {"train": 1}
    x, w = X.copy(), W.copy()
    for _ in range(3):  # plain SGD on x and w with the overridden gradient, in numpy
        grads = _overridden(x, w)
        x, w = x - 0.1 * grads["x"], w - 0.1 * grads["w"]
    np.testing.assert_allclose(record.final["x"], x)
    np.testing.assert_allclose(record.final["w"], w)
    program.train()  # a second run (a sweep's rebind) replays the same training gradients
    assert program.gradient_builds == {"train": 1}


def test_a_run_without_numeric_asks_each_set_once_and_a_rebind_builds_none_again():
    program = _built(TRAIN)
    first = runner.run(load_spec_text(TRAIN), numeric=False, program=program)
    assert program.gradient_builds == {"overridden": 1, "true": 1, "train": 1}
    assert first.gradients["y"]["x"].numeric_kind == "skipped"
    moved = TRAIN.replace("[-2.0, -0.5, 0.25, 1.5]", "[0.5, -3.0, 2.0, -0.75]")
    exp = load_spec_text(moved)
    assert program.rebind(exp)
    second = runner.run(exp, numeric=False, program=program)
    assert program.gradient_builds == {"overridden": 1, "true": 1, "train": 1}
    x2 = np.array([0.5, -3.0, 2.0, -0.75])
    np.testing.assert_allclose(second.gradients["y"]["x"].overridden, _overridden(x2, W)["x"])
    np.testing.assert_allclose(second.gradients["y"]["x"].true, 2 * x2)


def test_curve_replays_build_only_what_they_read():
    program = _built(SPEC)
    assert float(program.output_at({"x": np.array([1.0, 1.0, 1.0, 1.0])}, "y")) == 14.0
    assert program.gradient_builds == {}
    over, true = program.gradients_at({"x": np.array([0.5, 2.0, -0.5, -2.0])}, "y", "x")
    np.testing.assert_allclose(over, [2.0, 4.0, 2.0, -4.0])
    np.testing.assert_allclose(true, [1.0, 4.0, -1.0, -4.0])
    assert program.gradient_builds == {"overridden": 1, "true": 1}


DRAWN = """
seed: 5
inputs:
  x: [0.5, -1.0, 2.0, 3.0, -0.25, 1.0]
functions:
  noisy:
    args: [a]
    forward: a * 2.0
    gradient: dy * uniform([6])
outputs:
  y: sum(noisy(x))
"""


def test_a_gradient_expression_draws_the_same_whichever_set_is_asked_first():
    one, other = _built(DRAWN), _built(DRAWN)
    first = one.gradients("overridden")["y"]["x"]
    other.gradients("true")
    _built(DRAWN).gradients("overridden")  # another program's draws do not move this one's
    second = other.gradients("overridden")["y"]["x"]
    np.testing.assert_array_equal(first, second)
    assert np.all((first > 0) & (first < 1)) and len(set(first.tolist())) == 6


def _projection(gradient, directions: int, seed: int):
    """The least-norm gradient with the same slopes along the seeded directions, in numpy."""
    basis = np.random.default_rng(seed).standard_normal((directions, gradient.size))
    basis /= np.linalg.norm(basis, axis=1, keepdims=True)
    return np.linalg.pinv(basis) @ (basis @ gradient)


def test_the_backend_reports_its_directional_seed_and_the_runner_projects_with_it(monkeypatch):
    spec = ("seed: 11\ninputs:\n  a: {normal: [0, 1], shape: [40]}\n  b: [1.0, 2.0]\n"
            "outputs:\n  y: sum(a * a * a) + sum(b * b)\n")
    monkeypatch.setattr(runner, "MAX_PROBES", 8)  # a (40 elements) directional, b full
    exp = load_spec_text(spec)
    program = backends.build(exp)
    numeric = program.numeric(8, 16)
    assert program.numeric_kinds == {"y": {"a": "directional", "b": "full"}}
    assert program.numeric_seeds == {"y": {"a": 11, "b": None}}
    a = exp.inputs["a"].value
    np.testing.assert_allclose(numeric["y"]["a"], _projection(3 * a * a, 16, 11), rtol=1e-6,
                               atol=1e-7)

    class Reporting(type(program)):  # a backend that drew its directions with seed 4
        def numeric(self, max_probes, directions):
            found = super().numeric(max_probes, directions)
            self.numeric_seeds = {"y": {"a": 4, "b": None}}
            return found

    program.__class__ = Reporting
    summary = runner.run(exp, program=program).summary["y"]["a"]
    reported = _projection(3 * a * a, 16, 4)
    expected = np.max(np.abs(numeric["y"]["a"] - reported))
    assert summary.numeric_max_abs_diff == pytest.approx(expected, rel=1e-9)
    assert summary.numeric_max_abs_diff > 1e-3  # not the projection with the spec's seed


def test_every_backend_builds_a_set_when_asked_and_reports_its_seed(backend):
    spec = ("seed: 2\ninputs:\n  a: {uniform: [-1, 1], shape: [12]}\n  b: [1.0, -2.0]\n"
            "outputs:\n  y: sum(a * a * b[0]) + sum(b * b * b)\n")
    exp = load_spec_text(spec)
    program = backends.build(exp, backend)
    assert program.gradient_builds == {}
    a, b = exp.inputs["a"].value, np.array([1.0, -2.0])
    true = program.gradients("true")["y"]
    assert program.gradient_builds == {"true": 1}
    np.testing.assert_allclose(true["a"], 2 * a * b[0])
    np.testing.assert_allclose(true["b"], [3.0 + np.sum(a * a), 12.0])
    numeric = program.numeric(4, 6)  # a: 12 elements, directional; b: full
    assert program.numeric_kinds == {"y": {"a": "directional", "b": "full"}}
    assert program.numeric_seeds == {"y": {"a": 2, "b": None}}
    np.testing.assert_allclose(numeric["y"]["a"], _projection(2 * a * b[0], 6, 2), rtol=1e-6,
                               atol=1e-8)
    assert program.gradient_builds == {"true": 1}


COUNTED = """
inputs:
  x: [0.5, -2.0]
register:
  Twice: 2 * dy
let:
  p: sign(x) * x
  q: sign(x) + sign(x * x)
override_map:
  - {op: sign, gradient: Twice}
  - {op: floor, gradient: Twice}
  - {op: mul, gradient: identity, scope: [q]}
outputs:
  y: sum(p + q)
"""


def test_every_builder_counts_the_ops_each_override_entry_matched(backend):
    program = backends.build(load_spec_text(COUNTED), backend)
    # sign: three ops (global scope); floor: none; mul: only q's one (p's is outside its scope)
    assert [(e.op, n) for e, n in program.override_matches] == [("sign", 3), ("floor", 0),
                                                                ("mul", 1)]
    x = np.array([0.5, -2.0])
    # p = sign(x) * x: mul's own rule gives sign(x) + x * (2 * 1); q: 2 + 2 * (identity: 1)
    expected = np.sign(x) + 2 * x + 2 + 2
    np.testing.assert_allclose(program.gradients("overridden")["y"]["x"], expected)
