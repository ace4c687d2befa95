"""The backward walk: gc.gradients and gc.true_gradients, as tf.gradients does it.

Gradients are built as graph ops, so they can be evaluated, replayed and
differentiated again. The walk is iterative, visits only ops on a path from
the xs to the ys, never enters a tensor in stop_gradients, sums gradients
arriving by several paths and drops partial sums once they are used.

The build runs with Python's cyclic garbage collector paused (evaluate.collector_paused,
restored as it was found, nesting safely): it creates many small objects that all stay alive,
so a collection there finds nothing to free, and in a process that also holds a large library
(torch: about a million tracked objects) each full pass costs as much as the build itself.
Only this call's own work runs paused: a user's rules and grad_fns are called inside it, but
the forward the user builds op by op is never covered (see README, "The library").
"""
from __future__ import annotations

import inspect

import numpy as np

from ..errors import GradientError, UnconnectedGradientError
from . import ops_array as A
from . import ops_math as M
from . import registry
from .evaluate import collector_paused
from .graph import Op, Tensor
from .origins import ORIGIN
from .registry import is_builtin, lookup
from .shapes import fitting, not_a_gradient

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

    reaching = {x.uid for x in xs if x.differentiable}
    every: list[Op] | None = [] if true else None
    relevant = _on_paths(ys, reaching, stops, xs, every)

    # uid -> the gradient arrived so far, or the list of them once a second one arrives (most
    # tensors get one: no list for them); summed in arrival order either way
    partials: dict[int, Tensor | list[Tensor]] = {}
    for y, gy in zip(ys, grad_ys):
        if y.uid in reaching:
            _arrive(partials, y.uid, _seed(y, gy))

    done: dict[int, Tensor] = {}
    outer = ORIGIN.current
    saved = registry.ask(None, ())
    try:
        _backward(relevant, partials, wanted, done, stops, reaching, true, outer)
    finally:
        ORIGIN.current = outer
        registry.restore(saved)

    result = []
    depended_on = None  # found only if some x gets no gradient: a walk over every op
    for x in xs:
        g = done[x.uid] if x.uid in done else _summed(partials, x, wanted, done)
        if g is None and true and x.differentiable:
            # The true gradient of a y whose value depends on x only through comparisons, casts
            # from bool or other piecewise-constant steps is zero, not missing (numeric
            # differences agree).
            if depended_on is None:
                depended_on = _inputs_of(every, ys)
            if x.uid in depended_on:
                g = M.constant(np.zeros(x.shape, dtype=x.dtype))
        result.append(g if g is not None else _unconnected(x, unconnected))
    return result


def _inputs_of(ops: list[Op], ys: list[Tensor]) -> set:
    """uids of the ys and of every tensor whose value flows into them (a custom gradient's or
    grad_pass_through's routing inputs, before attrs["value_from"], carry no value)."""
    used = {y.uid for y in ys}
    for op in reversed(ops):
        multi = op.multi
        for t in (op,) if multi is None else multi:  # None: the op is its own output
            if t.uid in used:
                first = op.attrs.get("value_from", 0)
                used.update([u.uid for u in (op.inputs[first:] if first else op.inputs)])
                break
    return used


def _on_paths(ys: list, reaching: set, stops: set, xs: list, every: list | None) -> list[Op]:
    """The ops on a path from the xs to the ys, in walk_ops's order (depth first from the ys,
    each op after its inputs); reaching gains the uids of the tensors a gradient can reach.

    One walk: an op is placed when its inputs are done, so it is relevant then or never.
    Leaves and ops built before every differentiable x (a smaller uid: its inputs existed
    before it) are not entered: no path from an x goes through them, and leaving them out
    changes no other op's place. every (true gradients) gets each op entered.
    """
    if not reaching:
        return []
    floor = min((x._op or x).uid for x in xs if x.uid in reaching)
    relevant: list[Op] = []
    seen: set[int] = set()
    see, reach, place = seen.add, reaching.add, relevant.append  # bound once: called per op
    for y in ys:
        op = y._op or y  # a tensor is its own op unless one of an Op's outputs
        if y.uid in stops or op.uid in seen or op.uid <= floor or op.in1 is None:
            continue
        see(op.uid)
        # the op being walked and its inputs' iterator are locals; the stack holds only the
        # ops above it, each pushed as two items, op then iterator (no tuple per op), and
        # resumes its inputs where it left them. An op keeps one or two
        # inputs in fields, in2 None for one (graph._OpFields): the pair is iterated as it is.
        children = iter((op.in1, op.in2) if op.many is None else op.many)
        stack: list = []
        push, pop = stack.append, stack.pop
        while True:
            for child in children:
                if child is None:
                    continue  # the pair of a one-input op: nothing after it
                cop = child._op or child
                cuid = cop.uid
                if (cop.in1 is not None and cuid > floor and cuid not in seen  # a leaf: first
                        and child.uid not in stops):
                    see(cuid)
                    push(op)
                    push(children)
                    op, children = cop, iter((cop.in1, cop.in2) if cop.many is None else cop.many)
                    break
            else:
                if every is not None:
                    every.append(op)
                # does a gradient reach an input? (the fields read without a tuple per op)
                in2, many = op.in2, op.many
                if (op.in1.uid in reaching or (in2 is not None and in2.uid in reaching)
                        or (many is not None and any(t.uid in reaching for t in many))):
                    place(op)
                    multi = op.multi
                    if multi is None:  # one output: the op itself
                        if op.dtype.kind == "f" and op.uid not in stops:  # differentiable
                            reach(op.uid)
                    else:
                        for out in multi:
                            if out.dtype.kind == "f" and out.uid not in stops:
                                reach(out.uid)
                if not stack:
                    break
                children = pop()
                op = pop()
    return relevant


def _backward(relevant: list, partials: dict, wanted: set, done: dict, stops: set,
              reaching: set, true: bool, outer) -> None:
    """Each relevant op's rule applied to its summed upstream gradients, last op first; what
    reaches its inputs is added to partials. The common case (one output, one gradient
    arriving, a built-in rule returning tensors that fit) runs inline: no call per step."""
    asked = registry.asked()  # a rule reads it through needed(op); a nested walk restores it
    rules: dict[str, tuple] = {}  # name -> (rule, strict), looked up once per walk
    current = outer  # ORIGIN.current, set only when it changes (a thread-local's setattr)
    for op in reversed(relevant):
        # The gradient ops of an op carry its origin: a NaN born there names the forward op.
        # A rule leaves ORIGIN.current as it found it (gc.origin and a nested walk restore it).
        origin = op.origin
        if origin is None:
            origin = outer
        if origin is not current:
            ORIGIN.current = current = origin
        multi = op.multi
        if multi is None:  # one output: the op itself
            uid = op.uid
            if uid in stops:
                continue  # a stopped output passes nothing back
            parts = partials.pop(uid, None)
            if parts is None:
                g = done.get(uid)
                if g is None:
                    continue
            else:
                g = A.add_n(parts) if parts.__class__ is list else parts
                if uid in wanted:
                    done[uid] = g
            out_grads = None  # the rule is called with g alone
        else:
            out_grads = _output_grads(multi, partials, wanted, done, stops)
            if out_grads is None:
                continue
        name = op.type if true else (op.override or op.type)
        found = rules.get(name)
        if found is None:
            found = rules[name] = (lookup(name, true=true), _user_written(op, name, true))
            if found[0] is None:
                raise _no_rule(name, op)
            if name == "custom_gradient":  # strict depends on the op's type, not only the name
                found = rules[name] = (found[0], None)
        rule, strict = found
        if strict is None:
            strict = _user_written(op, name, true)
        # The rule is asked only for the inputs a gradient reaches (registry.needed): the
        # constant of `y * 0.999` gets none built, where the walk used to build and drop it.
        inputs = op.many
        if inputs is not None:
            n = len(inputs)
            mask = tuple([t.uid in reaching for t in inputs])
        elif op.in2 is None:
            n, inputs, mask = 1, (op.in1,), (True,)  # the op is relevant: its one input reaches
        else:
            n, inputs = 2, (op.in1, op.in2)
            mask = (op.in1.uid in reaching, op.in2.uid in reaching)
        asked.op, asked.mask = op, mask
        try:
            raw = rule(op, g) if out_grads is None else rule(op, *out_grads)
        except TypeError:
            n_grads = 1 if out_grads is None else len(out_grads)
            if _accepts(rule, 1 + n_grads):
                raise  # the rule's own body failed: its traceback says where
            raise _uncallable(name, op, n_grads) from None
        if raw.__class__ is not tuple or len(raw) != n:
            raw = ((raw,) if raw.__class__ is Tensor and n == 1 else
                   _one_per_input(raw, op, name))
        for i, t in enumerate(inputs):
            g = raw[i]
            if g is not None and mask[i]:
                if not (g.__class__ is Tensor and g.shape == t.shape
                        and (g.dtype is t.dtype or g.dtype == t.dtype)):
                    g = _fit(g, t, i, op, name, strict)
                # _arrive's body, written out (one call per gradient edge saved)
                uid = t.uid
                if uid not in partials:
                    partials[uid] = g
                elif (parts := partials[uid]).__class__ is list:
                    parts.append(g)
                else:
                    partials[uid] = [parts, g]


def _output_grads(outputs: tuple, partials: dict, wanted: set, done: dict, stops: set):
    """A multi-output op's upstream gradients, one per output (zeros for an unused output),
    or None if none arrives."""
    out_grads = [_summed(partials, t, wanted, done) for t in outputs]
    # A stopped output passes nothing back, even when its op is reached by another output.
    out_grads = [None if t.uid in stops else g for t, g in zip(outputs, out_grads)]
    if all(g is None for g in out_grads):
        return None
    return [_zeros(t) if g is None and t.differentiable else g for t, g in zip(outputs, out_grads)]


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


def _arrive(partials: dict, uid: int, g: Tensor) -> None:
    parts = partials.get(uid)
    if parts is None:
        partials[uid] = g
    elif parts.__class__ is list:
        parts.append(g)
    else:
        partials[uid] = [parts, g]


def _summed(partials: dict, t: Tensor, wanted: set, done: dict) -> Tensor | None:
    parts = partials.pop(t.uid, None)
    if parts is None:
        return done.get(t.uid)
    total = A.add_n(parts if parts.__class__ is list else [parts])
    if t.uid in wanted:
        done[t.uid] = total
    return total


def _zeros(t: Tensor) -> Tensor:
    # An output nobody used gets zeros, as TensorFlow gives a multi-output op's rule.
    return M.constant(np.zeros(t.shape, dtype=t.dtype))


def _no_rule(name: str, op: Op) -> GradientError:
    return GradientError(f"no gradient is registered under {name!r} (needed by op {op.name} of "
                         f"type {op.type!r}); register one with @gc.register_gradient")


def _uncallable(name: str, op: Op, n_grads: int) -> GradientError:
    grads = ", ".join(f"grad{i}" for i in range(n_grads))
    return GradientError(f"gradient {name!r} for op {op.type!r} cannot be called with the op and "
                         f"{n_grads} upstream gradient(s), one per output: define it as "
                         f"def f(op, {grads})")


def _one_per_input(raw, op: Op, name: str) -> tuple:
    """A rule's result as one gradient (or None) per input, or the error saying why not."""
    n = len(op.inputs)
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
    """Bring a rule's gradient to the input's shape and dtype: numbers broadcast, broadcasting
    undone (strict, a user-written rule: only a scalar); the rule and its errors: shapes.fitting."""
    if name == "custom_gradient":
        name = op.attrs.get("fn", name)  # the user's function, by its name
    if not isinstance(g, Tensor):
        try:
            g = M.convert(g, like=t)
        except Exception:
            raise not_a_gradient(name, op.type, i, g) from None
    cast, reshape = fitting(name, op.type, i, (str(g.dtype), g.shape), (str(t.dtype), t.shape),
                            strict, t.name)
    if cast:
        g = M.cast(g, t.dtype)
    if reshape is None:
        return g
    return A.broadcast_to(g, t.shape) if reshape == "broadcast" else A.sum_to(g, t.shape)


def _unconnected(x: Tensor, mode: str):
    if mode == "zero":
        return M.constant(np.zeros(x.shape, dtype=x.dtype))
    if mode == "error":
        raise UnconnectedGradientError(f"{x.name} is not connected to the outputs: no path "
                                       "carries a gradient to it (unconnected_gradients='error')")
    return None

