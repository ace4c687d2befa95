"""A compiled schedule (schedule.Schedule) as one generated Python function.

Replaying a small graph costs more in dispatch than in arithmetic: the schedule's loop reads
each instruction, branches on its arity and moves values through a list. The generated
function does the same calls in the same order with the slots as its locals, the kernels and
constants bound as keyword-only defaults (local reads), Python's operators written inline for
the operator module's functions (`a * b` is what operator.mul does), an output of a
multi-output op read by subscript, and a partial's keywords passed directly. Nothing changes in
what is computed, so the values are the same bits.
"""
from __future__ import annotations

import functools
import keyword
import operator

import numpy as np

# Long schedules (a 20k-op chain) replay in their loop: compiling their source would cost
# more than the dispatch it saves, and the cold path compiles on a graph's second evaluation.
CODEGEN_MAX = 400
CODEGEN_AFTER = 2  # replays in the loop first: a schedule evaluated once or twice never pays

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.matmul: "@", operator.pow: "**", operator.floordiv: "//", operator.mod: "%",
          operator.gt: ">", operator.ge: ">=", operator.lt: "<", operator.le: "<=",
          operator.eq: "==", operator.ne: "!=", operator.and_: "&", operator.or_: "|",
          operator.xor: "^"}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
# numpy's functions that dispatch on __array_function__ (np.where, np.transpose, ...): for
# arguments that are all exact ndarrays, numpy numbers or Python numbers, the dispatch finds
# no override and calls fn._implementation with the same arguments; called directly, it skips
# a Python-level dispatcher call (~1 µs a call, as much as a small where's own work)
_DISPATCHER = type(np.where)
_PLAIN = (int, float, complex, bool, np.generic)
_GETTERS: dict = {}  # itemgetter(i) -> i, for the outputs of multi-output ops
_BY_INDEX: dict = {}  # i -> itemgetter(i): _GETTERS the other way, found without a search


def item_getter(i: int):
    """operator.itemgetter(i), one object per i, so that generated code can read it as x[i]."""
    getter = _BY_INDEX.get(i)
    if getter is None:
        getter = _BY_INDEX[i] = operator.itemgetter(i)
        _GETTERS[getter] = i
    return getter


class _Names:
    """Keyword-only defaults of the generated function: one name per distinct object."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.by_id: dict = {}

    def bind(self, value, prefix: str) -> str:
        name = self.by_id.get(id(value))
        if name is None:
            name = self.by_id[id(value)] = f"{prefix}{len(self.values)}"
            self.values[name] = value
        return name


def _call(fn, args: list[str], names: _Names, constants: dict) -> str:
    """The source of fn(*args), with a partial's keywords written out (`constants`: the
    constant slots' values by local name)."""
    if (type(fn) is functools.partial and not fn.args and type(fn.func) is not functools.partial
            and all(k.isidentifier() and not keyword.iskeyword(k) for k in fn.keywords)):
        if fn.func is np.transpose and len(args) == 1 and set(fn.keywords) == {"axes"}:
            # np.transpose(a, axes) is a.transpose(axes) for an array, after a Python dispatch
            axes, kernel = names.bind(fn.keywords["axes"], "a"), names.bind(fn.func, "k")
            x = args[0]
            return f"{x}.transpose({axes}) if {x}.__class__ is ndarray else {kernel}({x}, axes={axes})"
        kw = ", ".join(f"{k}={names.bind(v, 'a')}" for k, v in fn.keywords.items())
        return f"{names.bind(fn.func, 'k')}({', '.join(args)}, {kw})"
    if fn in _GETTERS and len(args) == 1:
        return f"{args[0]}[{_GETTERS[fn]}]"
    if len(args) == 2 and fn in _INFIX:
        return f"{args[0]} {_INFIX[fn]} {args[1]}"
    if len(args) == 1 and fn in _PREFIX:
        return f"{_PREFIX[fn]}{args[0]}"
    call = f"{names.bind(fn, 'k')}({', '.join(args)})"
    implementation = getattr(fn, "_implementation", None) if type(fn) is _DISPATCHER else None
    if implementation is not None:
        # the values a replay computes are checked where they are read; a constant, once here
        checked = [x for x in args if not (x in constants and (
            type(constants[x]) is np.ndarray or isinstance(constants[x], _PLAIN)))]
        direct = f"{names.bind(implementation, 'k')}({', '.join(args)})"
        if not checked:
            return direct
        guard = " and ".join(f"{x}.__class__ is ndarray" for x in checked)
        return f"{direct} if {guard} else {call}"
    return call


def _hashable(fn) -> bool:
    try:
        hash(fn)
    except TypeError:
        return False
    return True


def generate(schedule):
    """schedule.run as a generated function f(feed_values) -> list of fetched values. It holds
    no np.errstate of its own: its caller enters errstate(all="ignore") (Schedule.run does; a
    training step enters one for its replay and update together)."""
    names = _Names()
    names.values["ndarray"] = np.ndarray
    body = []
    written = {out for _, out, _, _ in schedule.program}
    written.update(schedule.feed_slots, (i for _, i in schedule.variables))
    constants = {}
    for i, value in enumerate(schedule.template):
        if i not in written:
            names.values[f"s{i}"] = constants[f"s{i}"] = value  # a constant: bound once
    for var, i in schedule.variables:
        body.append(f"s{i} = {names.bind(var, 'v')}._value")
    if schedule.feed_slots:
        body.append("n = len(feed_values)")
        for j, i in enumerate(schedule.feed_slots):
            body.append(f"s{i} = feed_values[{j}] if n > {j} else None")
    for fn, out, a, b in schedule.program:
        if not _hashable(fn):
            return None
        args = [f"s{a}", f"s{b}"] if b >= 0 else [f"s{a}"] if b == -1 else [f"s{i}" for i in a]
        body.append(f"s{out} = {_call(fn, args, names, constants)}")
    body.append(f"return [{', '.join(f's{i}' for i in schedule.fetch_slots)}]")
    defaults = ", ".join(f"{name}={name}" for name in names.values)
    source = (f"def make({', '.join(names.values)}):\n"
              f"    def replay(feed_values=(), *, {defaults}):\n"
              + "".join(f"        {line}\n" for line in body)
              + "    return replay\n")
    namespace: dict = {}
    exec(compile(source, "<gradcli replay>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["make"](**names.values)
