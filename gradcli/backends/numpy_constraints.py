"""Constraints the numpy trainee applies without a replay: every constraint one op over leaves
(its kernel called directly), and the constraints clip(W, lo, hi) of their own variables with
constant bounds, clipped in place on the values an update just made (numpy_train).

Split from numpy_train.py, which drives them; the plans are decided once per graph.
"""
from __future__ import annotations

import numpy as np

from .. import core as gc
from ..ops import kernels


def direct_ops(nodes: dict) -> list:
    """[(name, kernel, leaf inputs)] when every node is one single-output op whose inputs are
    leaves (variables, constants), as a constraint clip(W, -1, 1) is: calling that kernel on
    their values is what the replay would do, without compiling and running a schedule each
    step. Else [] (replay)."""
    direct = []
    for name, node in nodes.items():
        op = node.op
        if not op.inputs or len(op.outputs) != 1 or any(t.op.inputs for t in op.inputs):
            return []
        direct.append((name, op.kernel, op.inputs))
    return direct


def clip_plan(direct: list, variables: dict) -> list:
    """[(name, lo, hi)] when every direct node is kernels.clip of its own trainable variable
    with constant bounds (leaves that are not variables) that keep the variable's dtype and
    shape, else []. Decided once: a variable's dtype and shape never change (assign casts to
    the one and refuses another), nor do constants."""
    plan = []
    for name, kernel, leaves in direct:
        var = variables.get(name)
        if kernel is not kernels.clip or len(leaves) != 3 or leaves[0] is not var:
            return []
        lo, hi = leaves[1], leaves[2]
        if any(isinstance(t, gc.Variable) or not isinstance(t._value, (np.ndarray, np.generic))
               for t in (lo, hi)):
            return []
        lo, hi = lo._value, hi._value
        if np.result_type(var.dtype, lo, hi) != var.dtype:
            return []  # the kernel's dtype differs
        try:
            if np.broadcast_shapes(var.shape, np.shape(lo), np.shape(hi)) != var.shape:
                return []  # bounds that grow the value: the usual path's placed error
        except ValueError:
            return []
        plan.append((name, lo, hi))
    return plan


def flat_bounds(flat, plan: list):
    """(lo, hi) over a FlatUpdate's flat values: each planned variable's bounds in its part,
    -inf and +inf elsewhere (min and max with them give each element's own bits, NaN and -0.0
    included), or None when a planned variable is not in it or its dtype is not a float. The
    bounds cast exactly: clip_plan kept only bounds whose type the variable's dtype holds."""
    if flat.dtype.kind != "f" or any(n not in flat.names for n, _, _ in plan):
        return None
    lo = np.full(flat.bounds[-1][1], -np.inf, flat.dtype)
    hi = np.full(flat.bounds[-1][1], np.inf, flat.dtype)
    for name, low, high in plan:
        i = list(flat.names).index(name)
        (a, b), shape = flat.bounds[i], flat.shapes[i]
        lo[a:b] = np.broadcast_to(low, shape).reshape(-1)
        hi[a:b] = np.broadcast_to(high, shape).reshape(-1)
    return lo, hi
