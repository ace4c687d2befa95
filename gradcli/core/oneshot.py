"""Evaluating a set of fetches once, directly: the ops they need in topological order, from
the values the graph already holds, without compiling a replay schedule.

Most graphs are evaluated once (a CLI run builds, differentiates and prints). For them a
schedule's slot allocation and donation analysis cost more than running the kernels, and
values computed at build (matmuls, reductions) are current: they are read, not recomputed.
Each op's kernel runs at most once, the same kernels in the same order as a replay (the
results are the replay's to the bit); a value is dropped as soon as no later op reads it,
so a long chain holds only what is live. No recursion: walk_ops is iterative.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Sequence

import numpy as np

from .graph import State, Tensor, walk_ops

_uid = attrgetter("uid")


def evaluate_once(fetches: Sequence[Tensor], fed: Sequence[Tensor], feed_values: Sequence) -> list:
    """The fetches' values with fed tensors' values replaced, each needed op run once."""
    if not fed:
        return _evaluate_unfed(fetches)
    version = State.version
    values: dict[int, object] = {t.uid: v for t, v in zip(fed, feed_values)}
    if fed:
        fed_ids = set(values)
        ops = walk_ops(fetches, stop_ids=fed_ids)
        tainted = set(fed_ids)  # tensors whose value depends on a fed one: held values are wrong
    else:
        def held(u: Tensor) -> bool:
            return (u._op or u).in1 is None or (u._value is not None and u._version == version)

        ops = walk_ops(fetches, stop=held)
        fed_ids = tainted = None
    uses: dict[int, int] = {}
    for op in ops:
        for u in op.inputs:
            uses[u.uid] = uses.get(u.uid, 0) + 1
    fetch_ids = {t.uid for t in fetches}
    with np.errstate(all="ignore"):
        for op in ops:
            inputs = op.inputs
            outs = op.outputs
            if tainted is not None:
                if not inputs:
                    continue  # a leaf: its value is read where it is used
                if not any(u.uid in tainted for u in inputs):
                    if all(o._value is not None and o._version == version for o in outs):
                        _release(inputs, uses, values, fetch_ids)
                        continue  # current and not downstream of a feed: read, not run
                else:
                    tainted.update(o.uid for o in outs)
            args = [values[u.uid] if u.uid in values else u._value for u in inputs]
            _release(inputs, uses, values, fetch_ids)
            result = op.kernel(*args)
            for out, value in zip(outs, result if len(outs) > 1 else (result,)):
                uid = out.uid
                if fed_ids is not None and uid in fed_ids:
                    continue  # a fed output keeps its fed value when the op runs for another
                if out._value is not None and (tainted is None or uid not in tainted):
                    out._value, out._version = value, version  # a kept value gone stale
                if uid in uses or uid in fetch_ids:
                    values[uid] = value
    return [values[t.uid] if t.uid in values else t._value for t in fetches]


def _evaluate_unfed(fetches: Sequence[Tensor]) -> list:
    """evaluate_once without feeds, its hot path: collect the ops that held values do not
    cover, counting each computed value's readers, then run them in uid order.

    An op's uid is drawn when it is built and its inputs exist before it (nothing rewires
    them), so ascending op uids are a topological order: no depth-first stack of iterators
    for a 100,000-op chain, one sort by uid instead. Kernels are pure: any topological
    order gives the replay's bits. The ops are gathered in a list (a one-output op is new
    exactly when its output is first counted): no second dict to grow and rehash, and
    membership tests and subscripts rather than dict.get calls.
    """
    version = State.version
    uses: dict[int, int] = {}  # readers of each value computed here (a fetch counts as one)
    order: list = []  # the ops to run, each once
    several: set = set()  # the ops with several outputs in order (the others come with their output)
    for t in fetches:
        uid = t.uid
        if uid in uses:
            uses[uid] += 1
            continue
        op = t._op or t  # a tensor is its own op unless one of an Op's outputs
        if op.in1 is None or (t._value is not None and t._version == version):
            continue
        uses[uid] = 1
        if op.multi is None:
            order.append(op)
        elif op not in several:
            several.add(op)
            order.append(op)
    # An op keeps one or two inputs in fields, in2 None for one (graph._OpFields): both loops
    # below read the pair as it is (a None ends it) and only ops with three or more a tuple.
    for op in order:  # a list's iterator also yields what is appended while it runs
        for child in (op.in1, op.in2) if op.many is None else op.many:
            if child is None:
                break
            uid = child.uid
            if uid in uses:  # counted before: its op is already in order
                uses[uid] += 1
                continue
            cop = child._op or child
            if cop.in1 is None or (child._value is not None and child._version == version):
                continue  # held: read where it is used
            uses[uid] = 1
            if cop.multi is None:  # a one-output op: new with its output
                order.append(cop)
            elif cop not in several:
                several.add(cop)
                order.append(cop)
    order.sort(key=_uid)
    values: dict[int, object] = {}  # only values computed here, each until its last reader
    pop = values.pop
    with np.errstate(all="ignore"):
        for op in order:
            if op.many is not None:  # three or more inputs: their tuple
                result = op.kernel(*[_take(t, values, uses) for t in op.many])
            else:
                # one or two, written out: no tuple, list or argument tuple per op (each
                # is a GC-tracked allocation); _take's body, twice
                a = op.in1
                uid = a.uid
                if uid not in values:
                    x = a._value  # held
                elif uses[uid] == 1:  # its count stays at 1: no op reads it again
                    x = pop(uid)
                else:
                    x = values[uid]
                    uses[uid] -= 1
                b = op.in2
                if b is None:
                    result = op.kernel(x)
                else:
                    uid = b.uid
                    if uid not in values:
                        y = b._value
                    elif uses[uid] == 1:
                        y = pop(uid)
                    else:
                        y = values[uid]
                        uses[uid] -= 1
                    result = op.kernel(x, y)
            if op.multi is None:  # its own one output, counted when it was gathered
                values[op.uid] = result
                if op._value is not None:  # a kept value gone stale (a variable changed)
                    op._value, op._version = result, version
                continue
            for out, value in zip(op.multi, result):
                if out.uid in uses:
                    values[out.uid] = value
                if out._value is not None:
                    out._value, out._version = value, version
    return [values[t.uid] if t.uid in values else t._value for t in fetches]


def _take(t: Tensor, values: dict, uses: dict):
    """t's value for one of its readers, dropped from values at its last."""
    uid = t.uid
    if uid not in values:
        return t._value  # held
    if uses[uid] == 1:
        return values.pop(uid)
    uses[uid] -= 1
    return values[uid]


def _release(inputs, uses: dict, values: dict, fetch_ids: set) -> None:
    """Drop the values no later op reads (a tensor read twice by one op is counted twice)."""
    for u in inputs:
        uid = u.uid
        uses[uid] -= 1
        if not uses[uid] and uid not in fetch_ids:
            values.pop(uid, None)
