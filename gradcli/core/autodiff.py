"""The backward walk: gc.gradients and gc.true_gradients, as tf.gradients does it.

Gradients are built as graph ops, so they can be evaluated, replayed and
differentiated again. The walk is iterative, visits only ops on a path from
the xs to the ys, never enters a tensor in stop_gradients, sums gradients
arriving by several paths and drops partial sums once they are used.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..errors import GradientError, UnconnectedGradientError
from . import ops_array as A
from . import ops_math as M
from . import registry
from .evaluate import collector_paused
from .graph import ORIGIN, Op, Tensor, walk_ops
from .registry import is_builtin, lookup

UNCONNECTED = ("none", "zero", "error")


def gradients(ys, xs, grad_ys=None, stop_gradients=None, unconnected_gradients="none"):
    """d(sum of ys)/d(each x) with every override and custom gradient in force (tf.gradients)."""
    return _gradients(ys, xs, grad_ys, stop_gradients, unconnected_gradients, true=False)


def true_gradients(ys, xs, grad_ys=None, stop_gradients=None, unconnected_gradients="none"):
    """The same, with every gradient-altering construct replaced by its forward's derivative.

    An x that the ys' values depend on only through ops without a derivative (comparisons,
    casts from bool, max_with_argmax's index) gets zeros, not None: connected, with derivative 0 almost
    everywhere, as for sign and round. gc.gradients keeps TensorFlow's None there.
    """
    return _gradients(ys, xs, grad_ys, stop_gradients, unconnected_gradients, true=True)


def _tensor_list(value, what: str) -> list[Tensor]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, Tensor):
            raise GradientError(f"{what} must be tensors, got {type(item).__name__}")
    return items


def _gradients(ys, xs, grad_ys, stop_gradients, unconnected, *, true: bool) -> list:
    with collector_paused():
        return _build_gradients(ys, xs, grad_ys, stop_gradients, unconnected, true)


def _build_gradients(ys, xs, grad_ys, stop_gradients, unconnected, true: bool) -> list:
    unconnected = getattr(unconnected, "value", unconnected)
    if unconnected not in UNCONNECTED:
        raise GradientError(f"unconnected_gradients must be one of {', '.join(UNCONNECTED)}, "
                            f"got {unconnected!r}")
    ys, xs = _tensor_list(ys, "ys"), _tensor_list(xs, "xs")
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    if len(grad_ys) != len(ys):
        raise GradientError(f"grad_ys has {len(grad_ys)} entries for {len(ys)} ys; give one per y")
    stops = {t.uid for t in _tensor_list(stop_gradients or [], "stop_gradients")}
    wanted = {x.uid for x in xs}

    ops = walk_ops(ys, stop_ids=stops)
    reaching = {x.uid for x in xs if x.differentiable}
    relevant: list[Op] = []
    for op in ops:
        for t in op.inputs:
            if t.uid in reaching:
                relevant.append(op)
                for out in op.outputs:
                    if out.dtype.kind == "f" and out.uid not in stops:  # differentiable
                        reaching.add(out.uid)
                break

    partials: dict[int, list[Tensor]] = {}
    for y, gy in zip(ys, grad_ys):
        if y.uid in reaching:
            partials.setdefault(y.uid, []).append(_seed(y, gy))

    done: dict[int, Tensor] = {}
    outer = ORIGIN.current
    saved = registry.ask(None, ())
    rules: dict[str, tuple] = {}  # name -> (rule, strict), looked up once per walk
    try:
        for op in reversed(relevant):
            # The gradient ops of an op carry its origin: a NaN born there names the forward op.
            ORIGIN.current = op.origin if op.origin is not None else outer
            _backward_through(op, partials, wanted, done, stops, reaching, true, rules)
    finally:
        ORIGIN.current = outer
        registry.restore(saved)

    # The true gradient of a y whose value depends on x only through comparisons, casts from
    # bool or other piecewise-constant steps is zero, not missing (numeric differences agree).
    depended_on = _inputs_of(ops, ys) if true else set()
    result = []
    for x in xs:
        g = done[x.uid] if x.uid in done else _summed(partials, x, wanted, done)
        if g is None and x.uid in depended_on and x.differentiable:
            g = M.constant(np.zeros(x.shape, dtype=x.dtype))
        result.append(g if g is not None else _unconnected(x, unconnected))
    return result


def _inputs_of(ops: list[Op], ys: list[Tensor]) -> set:
    """uids of the ys and of every tensor whose value flows into them (a custom gradient's or
    grad_pass_through's routing inputs, before attrs["value_from"], carry no value)."""
    used = {y.uid for y in ys}
    for op in reversed(ops):
        for t in op.outputs:
            if t.uid in used:
                first = op.attrs.get("value_from", 0)
                used.update([u.uid for u in (op.inputs[first:] if first else op.inputs)])
                break
    return used


def _backward_through(op: Op, partials: dict, wanted: set, done: dict, stops: set,
                      reaching: set, true: bool, rules: dict) -> None:
    """Apply op's gradient rule to its summed upstream gradients; add what reaches its inputs."""
    outputs = op.outputs
    if len(outputs) == 1:  # the common case, without the lists
        t = outputs[0]
        if t.uid in stops:
            return  # a stopped output passes nothing back
        g = _summed(partials, t, wanted, done)
        if g is None:
            return
        out_grads = (g,)
    else:
        out_grads = [_summed(partials, t, wanted, done) for t in outputs]
        # A stopped output passes nothing back, even when its op is reached by another output.
        out_grads = [None if t.uid in stops else g for t, g in zip(outputs, out_grads)]
        if all(g is None for g in out_grads):
            return
        out_grads = [_zeros(t) if g is None and t.differentiable else g
                     for t, g in zip(outputs, out_grads)]
    name = op.type if true else (op.override or op.type)
    found = rules.get(name)
    if found is None:
        found = rules[name] = (lookup(name, true=true), _user_written(op, name, true))
    rule, strict = found
    if name == "custom_gradient":
        strict = _user_written(op, name, true)  # depends on the op's type, not only the name
    # The rule is asked only for the inputs a gradient reaches (registry.needed): the
    # constant of `y * 0.999` gets none built, where the walk used to build and drop it.
    mask = tuple([t.uid in reaching for t in op.inputs])
    raw = _apply_rule(op, name, rule, out_grads, mask)
    for i, t in enumerate(op.inputs):
        g = raw[i]
        if g is not None and mask[i]:
            if not (g.__class__ is Tensor and g.shape == t.shape and g.dtype == t.dtype):
                g = _fit(g, t, i, op, name, strict)
            parts = partials.get(t.uid)
            if parts is None:
                partials[t.uid] = [g]
            else:
                parts.append(g)


def _seed(y: Tensor, gy) -> Tensor:
    if gy is None:
        return M.constant(np.ones(y.shape, dtype=y.dtype))
    gy = M.convert(gy, like=y)
    if gy.shape != y.shape:
        if gy.ndim:
            raise GradientError(f"grad_ys for {y.name} has shape {gy.shape}; "
                                f"it must match the output's shape {y.shape} or be a scalar")
        gy = A.broadcast_to(gy, y.shape)
    return gy


def _summed(partials: dict, t: Tensor, wanted: set, done: dict) -> Tensor | None:
    parts = partials.pop(t.uid, None)
    if not parts:
        return done.get(t.uid)
    total = A.add_n(parts)
    if t.uid in wanted:
        done[t.uid] = total
    return total


def _zeros(t: Tensor) -> Tensor:
    # An output nobody used gets zeros, as TensorFlow gives a multi-output op's rule.
    return M.constant(np.zeros(t.shape, dtype=t.dtype))


def _apply_rule(op: Op, name: str, rule, out_grads, mask: tuple) -> tuple:
    if rule is None:
        raise GradientError(f"no gradient is registered under {name!r} (needed by op "
                            f"{op.name} of type {op.type!r}); register one with "
                            "@gc.register_gradient")
    asked = registry._asked  # a rule reads it through needed(op); a nested walk restores it
    asked.op, asked.mask = op, mask
    try:
        raw = rule(op, *out_grads)
    except TypeError:
        if _accepts(rule, 1 + len(out_grads)):
            raise  # the rule's own body failed: its traceback says where
        grads = ", ".join(f"grad{i}" for i in range(len(out_grads)))
        raise GradientError(f"gradient {name!r} for op {op.type!r} cannot be called with the op "
                            f"and {len(out_grads)} upstream gradient(s), one per output: define "
                            f"it as def f(op, {grads})") from None
    n = len(op.inputs)
    if raw.__class__ is tuple and len(raw) == n:
        return raw
    if raw is None or not isinstance(raw, (tuple, list)):
        if n != 1 and raw is not None:
            raise GradientError(f"gradient {name!r} for op {op.type!r} returned one gradient; "
                                f"the op has {n} inputs: return a list with one per input "
                                "(None where an input gets none)")
        raw = (raw,) * n if raw is None else (raw,)
    if len(raw) != n:
        raise GradientError(f"gradient {name!r} for op {op.type!r} returned {len(raw)} "
                            f"gradients; the op has {n} inputs")
    return tuple(raw)


def _accepts(rule, n_args: int) -> bool:
    try:
        inspect.signature(rule).bind(*range(n_args))
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (some builtins): assume it fits
        return True
    return True


def _user_written(op: Op, name: str, true: bool) -> bool:
    """A registered rule or a custom_gradient's grad_fn: its gradients must fit exactly."""
    if true:
        return False
    return not is_builtin(name) or (name == "custom_gradient" and op.type == "custom_gradient")


def _fit(g, t: Tensor, i: int, op: Op, name: str, strict: bool = False) -> Tensor:
    """Bring a rule's gradient to the input's shape: numbers broadcast, broadcasting undone.

    Built-in rules leave broadcasting to be undone here; a user-written rule (strict)
    must return the input's shape or a scalar, as spec-v1 says: summing its result
    down would hide a wrong gradient behind a plausible one.
    """
    if not isinstance(g, Tensor):
        try:
            g = M.convert(g, like=t)
        except Exception:
            raise GradientError(f"gradient {name!r} for op {op.type!r} returned a "
                                f"{type(g).__name__} for input {i}; expected a tensor, a number "
                                "or None") from None
    if g.dtype != t.dtype:
        if g.dtype.kind != "f":
            g = M.cast(g, t.dtype)
        else:
            raise GradientError(f"gradient {name!r} for op {op.type!r} returned {g.dtype} for "
                                f"input {i} of dtype {t.dtype}")
    if g.shape == t.shape:
        return g
    if g.ndim == 0:
        return A.broadcast_to(g, t.shape)
    try:
        broadcast = not strict and np.broadcast_shapes(g.shape, t.shape) == g.shape
    except ValueError:
        broadcast = False
    if not broadcast:
        if name == "custom_gradient":
            name = op.attrs["fn"]
        raise GradientError(f"gradient {name!r} for op {op.type!r} returned shape {g.shape} for "
                            f"input {i} ({t.name}) of shape {t.shape}; expected {t.shape} "
                            "(a scalar is broadcast)", gradient=name)
    return A.sum_to(g, t.shape)


def _unconnected(x: Tensor, mode: str):
    if mode == "zero":
        return M.constant(np.zeros(x.shape, dtype=x.dtype))
    if mode == "error":
        raise UnconnectedGradientError(f"{x.name} is not connected to the outputs: no path "
                                       "carries a gradient to it (unconnected_gradients='error')")
    return None

