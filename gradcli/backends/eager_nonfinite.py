"""Where a NaN or an infinity was born on an eager framework, from a checked build.

Eager ops run as they are built, so a build made for checking looks at every
op's output as it appears (forward) and, with every op wrapped in the kit's
custom-gradient op, at every op's vector-Jacobian product as the framework's
backward pass calls it (backward). Only a result that is already known to be
non-finite triggers such a build; ordinary builds check nothing.
"""
from __future__ import annotations

import numpy as np

from .kit import summed_vjp
from .program import birth, nonfinite_kind


class At:
    """A builder's current place while the interpreter builds one sub-expression."""

    __slots__ = ("builder", "place", "previous")

    def __init__(self, builder, place) -> None:
        self.builder, self.place = builder, place

    def __enter__(self):
        self.previous, self.builder.place = self.builder.place, self.place
        return self

    def __exit__(self, *exc) -> None:
        self.builder.place = self.previous


class BirthLog:
    """What a checked build saw: per tensor, the earliest birth its non-finite value came from."""

    def __init__(self, kit) -> None:
        self.kit = kit
        self.order = 0
        self.births: dict[int, tuple] = {}   # id(tensor) -> (order, op, place, leaf, born)
        self.backward: list[tuple] = []      # (op, place, leaf, born) reaching gradients, in order
        self.kept: list = []                 # tensors with a birth stay alive: their ids stay theirs
        self.in_backward = False             # set once the forward is built

    def _kind(self, t):
        return nonfinite_kind(np.asarray(self.kit.numpy(t))) if self.kit.is_tensor(t) else None

    def leaf(self, name: str, t) -> None:
        born = self._kind(t)
        if born is not None:
            self.births[id(t)] = (-1, "input", None, name, born)
            self.kept.append(t)

    def op(self, name: str, place, inputs, outs) -> None:
        """A forward op ran: its non-finite outputs inherit their inputs' birth, or are one."""
        if self.in_backward:  # an op of a backward rule (register, functions): checked as it runs
            self.vjp(name, place, inputs, (), outs)
            return
        self.order += 1
        inherited = min((self.births[id(t)] for t in inputs if id(t) in self.births),
                        default=None, key=lambda b: b[0])
        for out in outs:
            born = self._kind(out)
            if born is not None:
                self.births[id(out)] = inherited or (self.order, name, place, None, born)
                self.kept.append(out)

    def vjp(self, name: str, place, reads, upstream, grads) -> None:
        """An op's gradient ran. Non-finite gradients from finite upstream ones are a birth:
        of a forward value the op read, if one it read was non-finite, else born right here.
        Births are kept in the order they happen."""
        if any(self._kind(d) for d in upstream if d is not None):
            return  # born earlier in the backward pass
        born = next((k for k in (self._kind(g) for g in grads if g is not None) if k), None)
        if born is None:
            return
        bad = [t for t in reads if t is not None and self._kind(t)]
        if not bad:
            self.backward.append((name, place, None, born))
            return
        # The framework may hand the backward pass other objects than the forward made:
        # then the earliest forward birth stands in.
        forward = next((self.birth_of(t) for t in bad if id(t) in self.births), None)
        forward = forward or self.first_forward()
        if forward is not None:
            self.backward.append(forward)

    def birth_of(self, t):
        """(op, place, leaf, born) of the birth t's value came from, or None."""
        found = self.births.get(id(t))
        return None if found is None else found[1:]

    def first_forward(self):
        """The earliest forward birth, for a gradient whose backward made nothing new."""
        found = min(self.births.values(), default=None, key=lambda b: b[0])
        return None if found is None else found[1:]


def checked_vjp(builder, name: str, raw, inputs: list, attrs: dict):
    """raw(*inputs) inside the kit's custom-gradient op, whose backward is the framework's own
    vjp of raw, logged: the forward value as it is computed, the gradients as they are."""
    kit, log, place = builder.kit, builder.log, builder.place
    floats = [i for i, x in enumerate(inputs) if builder.is_float(x)]

    def forward(*xs):
        out = raw(*xs, **attrs)
        log.op(name, place, xs, tuple(out) if isinstance(out, (tuple, list)) else (out,))
        return out

    def backward(xs, outs, dys):
        total, grads = summed_vjp(kit, lambda *args: raw(*args, **attrs), xs, floats, dys)
        log.vjp(name, place, [xs[i] for i in floats], dys, total)
        return grads

    return kit.custom(list(inputs), forward, backward)


def locate(program, phase: str, tensors, leaves: dict, step=None) -> list:
    """Records for non-finite values (phase "forward" or "train"; names, or {label: Expr} of
    extra expressions) or gradients ((output, input) pairs), from one checked build per
    output."""
    exp, kit = program.experiment, program.kit
    if isinstance(tensors, dict):
        log = _leaf_log(kit, leaves)
        return _births(program, phase, log, program.evaluate_exprs(tensors, leaves, log=log), step)
    if phase in ("forward", "train") and all(isinstance(t, str) for t in tensors):
        log = _leaf_log(kit, leaves)
        env, _, _ = program.run("overridden", leaves, log=log)
        return _births(program, phase, log, {name: env[name] for name in tensors}, step)
    found = []
    kind = "overridden" if phase == "train" else phase
    for out in dict.fromkeys(o for o, _ in tensors):
        log = BirthLog(kit)
        rows = program.differentiate(kind, [out], [i for o, i in tensors if o == out],
                                     exp.stop_gradients, leaves, exp.grad_ys, log=log)
        grads = rows[out][1]
        op, place, leaf, born = (log.backward[0] if log.backward
                                 else log.first_forward() or (None, None, None, None))
        for name, (g, _) in grads.items():
            value = None if g is None else nonfinite_kind(np.asarray(kit.numpy(g)))
            if value is not None:
                found.append(birth(exp, phase, f"d{out}/d{name}", value, born or value, op, place,
                                   leaf, step))
    return found


def _leaf_log(kit, leaves: dict) -> BirthLog:
    """A BirthLog that knows which leaves are non-finite already (each its own birth)."""
    log = BirthLog(kit)
    for name, t in leaves.items():
        log.leaf(name, t)
    return log


def _births(program, phase: str, log: BirthLog, values: dict, step) -> list:
    """A record for each of {label: value} whose non-finite value the log saw born."""
    exp, kit, found = program.experiment, program.kit, []
    for label, t in values.items():
        hit = log.birth_of(t)
        if hit is not None:
            value = nonfinite_kind(np.asarray(kit.numpy(t)))
            op, place, leaf, born = hit
            found.append(birth(exp, phase, label, value, born, op, place, leaf, step))
    return found
