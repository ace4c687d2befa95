"""Refuse, as the spec loads, a sum, mean, max, min or prod of a tensor that is boolean by
construction.

TensorFlow has no boolean kernel for reduce_sum, _mean, _max, _min or _prod (numpy and jax
would count, torch fail or answer in its own words), so no backend of gradcli has one either
(ops/table.refused_dtype, asked as each op is built). Where the expression itself shows the
boolean (a comparison, a logical op, cast(..., bool), a boolean input or a let holding one, an
index or reshape of those),
`check` and `run` refuse it here with its place, before any backend is chosen; where only
the built tensor shows it (a function's argument, say), every backend refuses it alike.

"Boolean by construction" is spec/dtypes.py's dtype by construction, worked out from the op
table, not by building.
"""
from __future__ import annotations

from gradcli.lang.ast import Call, walk
from gradcli.lang.places import Place
from gradcli.ops import OPS
from gradcli.ops.table import (
    BOOLEAN_REFUSED,
    NO_BOOLEAN_KERNEL,
    boolean_arithmetic,
    boolean_reduction,
)
from gradcli.spec.dtypes import argument, spec_error
from gradcli.spec.model import Expr


def refuse_boolean_reductions(expr: Expr, dtypes: dict, key: str, like: str) -> None:
    """Raise a SpecError at the first reduction in BOOLEAN_REFUSED of expr whose argument is
    boolean by construction (a check for spec/dtypes.visit)."""
    for node in walk(expr.node):
        if isinstance(node, Call) and node.func in BOOLEAN_REFUSED:
            x = argument(node, "x")
            if x is not None and dtypes[id(x)] == "bool":
                message, hint = boolean_reduction(node.func, Place(expr, x).text, like)
                raise spec_error(expr, node.pos, message, key, hint)


def refuse_boolean_arithmetic(expr: Expr, dtypes: dict, key: str, like: str) -> None:
    """Raise a SpecError at the first op of expr without a boolean kernel in TensorFlow
    (ops.table.NO_BOOLEAN_KERNEL: c + c, -c, c * d, c < d, exp(c), ...) whose tensors are all
    boolean by construction (a check for spec/dtypes.visit; every backend refuses it at run
    time in the same words). A boolean beside another dtype is refuse_mixed_dtypes'."""
    for node in walk(expr.node):
        if isinstance(node, Call) and node.func in NO_BOOLEAN_KERNEL:
            operands = [a for a in (argument(node, p) for p in OPS[node.func].tensor_params)
                        if a is not None]
            if operands and all(dtypes[id(o)] == "bool" for o in operands):
                message, hint = boolean_arithmetic(node.func, len(operands),
                                                   Place(expr, operands[0]).text, like)
                raise spec_error(expr, node.pos, message, key, hint)
