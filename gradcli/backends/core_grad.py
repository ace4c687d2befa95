"""grad(y, x) on the numpy core: the inner gradient as graph nodes, connected to x and y.

gc.gradients builds d(sum y)/dx as ordinary ops, so an outer gradient goes
through it like through any other value. The result is passed through one
more op, `grad`, whose inputs are the gradient, x and y and whose rule sends
zeros to x and y: a grad() result counts as connected to everything y is
computed from, as the eager backends (which cannot see the structure of their
framework's backward graph) record it, so "unconnected" means the same on
every backend.
"""
from __future__ import annotations

from .. import core as gc
from ..core import ops_math as M
from ..core.building import make_op
from ..core.registry import defgrad, overrides_paused


def gradient(y, x):
    """d(sum y)/dx, zeros where no path carries one (tf.gradients' UnconnectedGradients.ZERO)."""
    with overrides_paused():  # override_map is about the spec's own ops, not backward ops
        (g,) = gc.gradients([y], [x], unconnected_gradients="zero")
    return make_op("grad", lambda g_, x_, y_: g_, (g, x, y)).outputs[0]


def _rule(op, dy):
    _, x, y = op.inputs
    return dy, M.zeros_like(x), M.zeros_like(y)


defgrad("grad", _rule)
