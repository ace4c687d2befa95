"""Random expression trees (smooth ops, broadcasting, gradient control): every framework's
values and gradients match the numpy core's."""
from __future__ import annotations

import numpy as np
from backend_helpers import close, load
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli import runner

SHAPES = {"a": (3,), "b": (2, 3), "c": ()}
UNARY = ["sin({})", "cos({})", "tanh({})", "softplus({})", "exp(tanh({}))",
         "log(1 + square({}))", "sqrt(1 + square({}))", "square({})", "-{}",
         "(1 + square({})) ** 1.5", "relu({})", "abs({})"]
# gradient control: identity and sigmoid are overridden in every spec (see spec()), wobble is a
# function with its own gradient
CONTROL = ["identity({})", "sigmoid({})", "stop_gradient({})", "reverse_gradient({}, scale=0.5)",
           "wobble({})", "grad_pass_through(tanh({}) * 2, wrt=c)"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (1 + square({})))", "maximum({}, {})",
          "minimum({}, {})"]
# reductions and indexing that keep every shape inside {(), (3,), (2, 3)} (all broadcast)
SHRINK = {(2, 3): [("sum({}, axis=0)", (3,)), ("logsumexp({}, axis=0)", (3,)),
                   ("mean({}, axis=0)", (3,)), ("max({}, axis=0)", (3,)), ("{}[1]", (3,)),
                   ("softmax({})", (2, 3)), ("sum({})", ())],
          (3,): [("sum({})", ()), ("prod({})", ()), ("{}[[2, 0, 0]]", (3,)), ("softmax({})", (3,)),
                 ("logsumexp({})", ())]}


@st.composite
def expressions(draw, depth: int = 4):
    """(expression text, its shape, whether it uses an input) over the inputs a, b, c."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 5)) == 0:
            return f"{draw(st.sampled_from([0.5, 1.5, -2.0]))}", (), False
        name = draw(st.sampled_from(sorted(SHAPES)))
        return name, SHAPES[name], True
    kind = draw(st.sampled_from(["unary", "control", "binary", "binary", "shrink", "where"]))
    left, shape, uses = draw(expressions(depth - 1))
    if kind in ("unary", "control"):
        return draw(st.sampled_from(UNARY if kind == "unary" else CONTROL)).format(left), shape, uses
    if kind == "shrink" and shape in SHRINK:
        template, new = draw(st.sampled_from(SHRINK[shape]))
        return template.format(left), new, uses
    right, other, uses_right = draw(expressions(depth - 1))
    joined, uses = tuple(np.broadcast_shapes(shape, other)), uses or uses_right
    if kind == "where":
        return f"where({left} > {right}, {left}, {right} * 2)", joined, uses
    template = draw(st.sampled_from(BINARY))
    return template.replace("{}", "{0}", 1).replace("{}", "{1}").format(left, right), joined, uses


def spec(expression: str, seed: int) -> str:
    return f"""
seed: {seed}
inputs:
  a: {{uniform: [-2, 2], shape: [3]}}
  b: {{uniform: [-2, 2], shape: [2, 3]}}
  c: {{normal: [0, 1], shape: []}}
register:
  Triple: dy * 3
override_map:
  identity: Triple
  sigmoid: hardtanh
functions:
  wobble:
    args: [u]
    forward: u * sin(u)
    gradient: [dy * cos(u)]
let:
  e: {expression}
outputs:
  y: e
  z: sum(e * e)
wrt: [a, b, c, e]
"""


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tree=expressions().filter(lambda tree: tree[2]), root=st.sampled_from(CONTROL + ["{}"]),
       seed=st.integers(0, 2**16))
def _check(framework, tree, root, seed):
    expression = root.format(tree[0])
    experiment = load(spec(expression, seed), "random")
    reference = runner.run(experiment, backend="numpy", numeric=False)
    result = runner.run(experiment, backend=framework, numeric=False)
    failures = close(result.values["e"], reference.values["e"], "e", rtol=1e-9, atol=1e-12)
    for out, row in reference.gradients.items():
        for name, ref in row.items():
            got = result.gradients[out][name]
            for kind in ("overridden", "true"):
                failures += close(getattr(got, kind), getattr(ref, kind), f"{kind} d{out}/d{name}",
                                  rtol=1e-8, atol=1e-10)
    assert failures == [], f"{expression}: {failures}"


def test_random_expressions_match_the_numpy_core(framework):
    _check(framework)
