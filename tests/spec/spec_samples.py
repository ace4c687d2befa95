"""Shared test data for the spec tests: sample specs and an AST printer."""
from __future__ import annotations

from gradcli.lang import Call, Const, IndexExpr, ListExpr, Name, SliceExpr

# A small valid spec most tests start from and change one thing in.
BASE = """\
inputs:
  x: [-2.0, -0.5, 0.5, 2.0]
  w: {uniform: [-1, 1], shape: [4]}
let:
  s: sign(x)
outputs:
  y: sum(s * w)
"""

# The example of shared/spec-v1.md, with the elided values filled in.
SPEC_V1_EXAMPLE = """\
name: ste-sign
description: sign forward, hard-tanh gradient backward
backend: numpy
dtype: float64
seed: 0

inputs:
  x: [-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 1.5]
  w: [1, 2, 3, 4, 5, 6, 7]
  u: {uniform: [-1, 1], shape: [7], trainable: false}
  r: {value: 0.2, trainable: false}
  labels: {value: [0, 2, 1], dtype: int64}

let:
  s: sign(x)
  "zeroed, index": zero_out(x)

outputs:
  y: sum(s * w)

wrt: [x, w]

register:
  QuantizeGrad: where(abs(x) <= 1, dy, 0)

override_map:
  sign: QuantizeGrad

functions:
  sigmoid_or_bin:
    args: [x, rand]
    forward: where(rand > 0.5, sigmoid(x), cast(x > 0, dtype(x)))
    gradient: [dy * sigmoid(x) * (1 - sigmoid(x)), none]

stop_gradients: [s]
grad_ys: {y: 1.0}
unconnected: none

train:
  loss: y
  optimizer: {name: sgd, lr: 0.1}
  clip: {norm: 5}
  steps: 1

expect:
  values: {y: 12.0}
  gradients: {y: {x: [0, 2, 3, 4, 5, 6, 0]}}
  true_gradients: {y: {x: [0, 0, 0, 0, 0, 0, 0], w: [-1, -1, -1, 0, 1, 1, 1]}}
  train: {params: {w: [1, 2, 3, 4, 5, 6, 7]}}
  tolerance: {rtol: 1.0e-6, atol: 1.0e-9}
"""


def sx(node) -> str:
    """A compact s-expression of a node, so expected trees read at a glance."""
    if isinstance(node, Call):
        parts = [node.func, *(sx(a) for a in node.args),
                 *(f"{k}={sx(v)}" for k, v in node.kwargs)]
        return "(" + " ".join(parts) + ")"
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Const):
        return repr(node.value)
    if isinstance(node, ListExpr):
        return "[" + " ".join(sx(i) for i in node.items) + "]"
    if isinstance(node, IndexExpr):
        return "idx(" + ", ".join(sx(i) for i in node.items) + ")"
    if isinstance(node, SliceExpr):
        return "slice(" + ",".join("_" if p is None else sx(p)
                                   for p in (node.start, node.stop, node.step)) + ")"
    if node is None:
        return "_"
    raise AssertionError(node)
