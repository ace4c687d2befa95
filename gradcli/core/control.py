"""Gradient control: constructs whose backward pass differs from their forward function.

Each registers two rules: the one training uses, and (as `true=`) the
derivative of its forward function, which gc.true_gradients uses instead.
The built-in named gradients (identity, hardtanh, reverse, zero) are written once, in the
expression language, in gradcli/ops BUILTINS: registered here by name, compiled by
gradcli/builtins.py when one first runs.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from ..errors import GradientError
from ..ops import BUILTINS
from . import ops_math as M
from .building import make_op
from .graph import Tensor, Variable, uid_mark, walk_ops
from .registry import defgrad


class CapturedVariablesError(GradientError, TypeError):
    """A TypeError, as tf.custom_gradient's for the same code, and a gradcli error."""


def _identity(*values):
    return values[0] if len(values) == 1 else values


def stop_gradient(x) -> Tensor:
    """Forward x, no gradient (tf.stop_gradient)."""
    return M.unary("stop_gradient", _identity, x)


def reverse_gradient(x, scale: float = 1.0) -> Tensor:
    """Forward x, backward -scale * dy: a gradient-reversal layer."""
    return M.unary("reverse_gradient", _identity, x, {"scale": float(scale)})


def grad_pass_through(fn: Callable) -> Callable:
    """Wrap fn: forward fn(*xs), backward identity into each x (tf.grad_pass_through)."""

    @functools.wraps(fn)
    def wrapper(*xs):
        xs = tuple(M.convert(x) for x in xs)
        y = fn(*xs)
        if not isinstance(y, Tensor):
            raise GradientError(f"grad_pass_through({_name(fn)}) expects fn to return one tensor, "
                                f"got {type(y).__name__}")
        n = len(xs)
        return make_op("grad_pass_through", lambda *vs: vs[n], (*xs, y),
                       {"fn": _name(fn), "value_from": n}).output

    return wrapper


def custom_gradient(fn: Callable) -> Callable:
    """Decorator: `def f(*xs): ...; return y, grad_fn` with grad_fn(*dys) -> one gradient per x.

    The forward ops are built as usual; a custom_gradient op passes their result
    on and, going backward, calls grad_fn instead of differentiating them.
    As tf.custom_gradient: when the forward reads trainable variables that are
    not among its inputs, grad_fn must take a `variables` keyword and return
    (input gradients, one gradient per variable); without it the call is refused
    (their gradients would silently be None).
    """

    @functools.wraps(fn)
    def wrapper(*args):
        xs = tuple(M.convert(a) for a in args)
        start = uid_mark()
        result = fn(*xs)
        if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
            raise GradientError(f"custom_gradient function {_name(fn)!r} must return "
                                f"(output, grad_fn); it returned {type(result).__name__}")
        ys, grad_fn = result
        single = isinstance(ys, Tensor)
        ys = (ys,) if single else tuple(ys)
        if not all(isinstance(y, Tensor) for y in ys):
            raise GradientError(f"custom_gradient function {_name(fn)!r} must return tensors "
                                "as its output; build it from gc ops")
        captured = _captured_variables(ys, xs, start)
        if captured and not _takes_variables(grad_fn):
            raise CapturedVariablesError(f"custom_gradient function {_name(fn)!r} reads the variable(s) "
                                f"{', '.join(repr(v.name) for v in captured)}, which are not "
                                "among its inputs: its grad_fn must accept the keyword argument "
                                "'variables' and return (input gradients, variable gradients), "
                                "as tf.custom_gradient requires")
        n = len(xs) + len(captured)
        attrs = {"grad_fn": grad_fn, "fn": _name(fn), "n_inputs": len(xs),
                 "arg_names": _arg_names(fn, len(xs)), "variables": captured,
                 "value_from": n}  # the output's value is the ys'; xs and variables route dy
        op = make_op("custom_gradient", lambda *vs: _identity(*vs[n:]), (*xs, *captured, *ys),
                     attrs, n_outputs=len(ys))
        return op.output if single else op.outputs

    return wrapper


def _captured_variables(ys: tuple, xs: tuple, start: int) -> list:
    """The trainable variables the forward read other than through its inputs (what
    tf.custom_gradient's VariableWatcher finds), in the order they were made.

    Only reads while fn ran count, as TF's watcher: the walk stops at tensors built before
    the call (a weight computed from a variable beforehand is a constant to fn), and a
    variable counts when an op fn built reads it, or fn returns it.
    """
    x_ids = {x.uid for x in xs}
    ops = walk_ops(ys, stop=lambda t: t.uid in x_ids or t.op.uid < start)
    read = [*ys, *(t for op in ops for t in op.inputs)]
    found = {t.uid: t for t in read
             if isinstance(t, Variable) and t.trainable and t.uid not in x_ids}
    return [found[uid] for uid in sorted(found)]


def _takes_variables(grad_fn) -> bool:
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "variables" and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD
               for p in params)


def _custom_rule(op, *dys):
    n, variables = op.attrs["n_inputs"], op.attrs.get("variables", [])
    if variables:
        grads, var_grads = op.attrs["grad_fn"](*dys, variables=list(variables))
        var_grads = tuple(var_grads)
        if len(var_grads) != len(variables):
            raise GradientError(f"the gradient function of custom_gradient {op.attrs['fn']!r} "
                                f"returned {len(var_grads)} variable gradient(s) for "
                                f"{len(variables)} variable(s): return one per variable")
    else:
        grads, var_grads = op.attrs["grad_fn"](*dys), ()
    if n == 1 and not isinstance(grads, (tuple, list)):
        grads = (grads,)
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    if len(grads) != n:
        names = ", ".join(op.attrs["arg_names"])
        raise GradientError(f"the gradient function of custom_gradient {op.attrs['fn']!r} returned "
                            f"{len(grads)} gradient(s); the function has {n} input(s) ({names}): "
                            "return one gradient per input, None where an input gets none")
    return grads + var_grads + (None,) * (len(op.inputs) - n - len(var_grads))


def _custom_true(op, *dys):
    n = op.attrs["n_inputs"] + len(op.attrs.get("variables", []))
    return (None,) * n + dys


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _arg_names(fn, n: int) -> list[str]:
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    return (names + [f"arg{i}" for i in range(len(names), n)])[:n]


defgrad("stop_gradient", lambda op, g: None, true=lambda op, g: g)
defgrad("reverse_gradient", lambda op, g: M.mul(g, -op.attrs["scale"]), true=lambda op, g: g)
defgrad("grad_pass_through", lambda op, g: (g,) * (len(op.inputs) - 1) + (None,),
        true=lambda op, g: (None,) * (len(op.inputs) - 1) + (g,))
defgrad("custom_gradient", _custom_rule, true=_custom_true)


# ----- the built-in named gradients (their text: gradcli/ops BUILTINS) -----
def _builtin(name: str):
    def rule(op, *dys):
        # The one place the core reaches above itself: gradcli/builtins.py, the module that
        # knows both the core and the language, compiles the text when a built-in first runs.
        from .. import builtins
        return builtins.rule(name)(op, *dys)

    rule.__name__ = name
    return rule


for _gradient in BUILTINS:  # "identity" is also the identity op's own rule (one namespace, as TF's)
    defgrad(_gradient, _builtin(_gradient))
