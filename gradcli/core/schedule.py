"""A compiled replay: the ops between some fed tensors and some fetches as a flat schedule.

A schedule is a list of (kernel, out, a, b) over a list of value slots; slots
are reused once their value is dead, so a long chain holds only what is live.
Replay creates no objects per op beyond what the kernels themselves return.

A small model's step is dominated by dispatch, not arithmetic, so two things are done once at
compile time: ops of a few pure types whose inputs are all constants are computed then and held
as constants (a loss's seed, reshape -> broadcast_to -> truediv), and a schedule of up to
CODEGEN_MAX instructions, once replayed more than CODEGEN_AFTER times, is turned into one Python
function (codegen.py) whose locals are the slots, so a replay runs no interpreter loop of its
own. Both call the same kernels on the same values in the same order: the same bits.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from .codegen import CODEGEN_AFTER, CODEGEN_MAX, generate, item_getter
from .graph import Op, Tensor, Variable, walk_ops
from .ops_array import _accumulate


class Schedule:
    """A compiled replay of the ops between some fed tensors and some fetches."""

    __slots__ = ("program", "template", "variables", "feed_slots", "fetch_slots", "fast", "runs")

    def __init__(self, fetches: Sequence[Tensor], fed: Sequence[Tensor]) -> None:
        fed_ids = {t.uid for t in fed}
        ops = walk_ops(fetches, stop_ids=fed_ids)
        slots = _SlotAllocator()
        self.feed_slots = [slots.pin(t) for t in fed]
        self.variables: list[tuple[Variable, int]] = []
        template_values: dict[int, object] = {}
        computed: list[Op] = []
        for op in ops:
            if op.inputs:
                computed.append(op)
            elif isinstance(op.outputs[0], Variable):
                self.variables.append((op.outputs[0], slots.pin(op.outputs[0])))
            else:
                template_values[slots.pin(op.outputs[0])] = op.outputs[0]._value
        del ops  # computed holds what the program needs
        fetch_ids = {t.uid for t in fetches}
        last_use = _last_uses(computed)
        donors = _donatable(computed, fetch_ids | slots.pinned)
        self.program: list[tuple] = []
        program, by_tensor, free = self.program, slots.by_tensor, slots.free_slots
        folded: dict[int, object] = {}  # uid -> value computed at compile time
        exposed = _exposed(fetches)
        for k, op in enumerate(computed):
            if op.type in _FOLDABLE:
                value = _folded(op, [folded[t.uid] if t.uid in folded else
                                     template_values.get(by_tensor.get(t.uid), _NOT_FOLDED)
                                     for t in op.inputs], exposed)
                if value is not _NOT_FOLDED:
                    folded[op.outputs[0].uid] = value
                    continue
            if folded:  # a folded value this op reads becomes a constant of the schedule
                for t in op.inputs:
                    if t.uid in folded and t.uid not in by_tensor:
                        template_values[slots.pin(t)] = folded[t.uid]
            ins = [by_tensor[t.uid] for t in op.inputs]
            slots.release_dead(op.inputs, op, last_use, fetch_ids)
            if len(op.outputs) != 1:
                self._emit(op, ins, slots, fetch_ids, last_use, k, donors)
                continue
            # _emit's single-output case, inline: compiling is one pass of this per op
            kernel = op.kernel
            if kernel in _IN_PLACE:
                kernel = _donating_kernel(op, k, last_use, donors)
            if free:
                slot = free.pop()
            else:
                slot = slots.count
                slots.count += 1
            by_tensor[op.outputs[0].uid] = slot
            if len(ins) == 1:
                program.append((kernel, slot, ins[0], -1))
            elif len(ins) == 2:
                program.append((kernel, slot, ins[0], ins[1]))
            else:
                program.append((kernel, slot, tuple(ins), -2))
        self.fetch_slots = [slots.slot_of(t) for t in fetches]
        self.template = [None] * slots.count
        for i, value in template_values.items():
            self.template[i] = value
        self.fast = None  # the generated function, once the schedule has replayed a few times
        self.runs = 0 if len(self.program) <= CODEGEN_MAX else None

    def _emit(self, op: Op, ins: list[int], slots: "_SlotAllocator", fetch_ids, last_use, k,
              donors: set) -> None:
        if len(op.outputs) == 1:
            kernel = _donating_kernel(op, k, last_use, donors)
            self.program.append(_instruction(kernel, slots.take(op.outputs[0]), ins))
            return
        bundle = slots.take_anonymous()
        self.program.append(_instruction(op.kernel, bundle, ins))
        for i, out in enumerate(op.outputs):
            if out.uid in slots.pinned:
                continue  # a fed output keeps its fed value when the op runs for another output
            if out.uid in fetch_ids or out.uid in last_use:  # read by a later op
                self.program.append((item_getter(i), slots.take(out), bundle, -1))
        slots.free(bundle)

    def run(self, feed_values: Sequence = ()) -> list:
        if self.fast is not None:
            with np.errstate(all="ignore"):
                return self.fast(feed_values)
        if self.runs is not None:
            # compiling the source costs what some tens of replays of it save: only a
            # schedule replayed more than a couple of times (a loop) is generated
            self.runs += 1
            if self.runs > CODEGEN_AFTER:
                self.fast = generate(self)
                if self.fast is not None:
                    with np.errstate(all="ignore"):
                        return self.fast(feed_values)
                self.runs = None
        v = self.template.copy()
        for var, i in self.variables:
            v[i] = var._value
        for i, value in zip(self.feed_slots, feed_values):
            v[i] = value
        with np.errstate(all="ignore"):
            for fn, out, a, b in self.program:
                if b >= 0:
                    v[out] = fn(v[a], v[b])
                elif b == -1:
                    v[out] = fn(v[a])
                else:
                    v[out] = fn(*[v[i] for i in a])
        return [v[i] for i in self.fetch_slots]

    def run_ignoring(self, feed_values: Sequence = ()) -> list:
        """run() for a caller that already holds np.errstate(all="ignore"): the generated
        function without entering a second one (a training step replays and updates in one)."""
        fast = self.fast
        return self.run(feed_values) if fast is None else fast(feed_values)


# ----- constant folding -----
# Only op types that are pure functions of their inputs: a registered op's kernel may draw or
# count calls, and folding would run it once instead of every replay.
_FOLDABLE = {"reshape", "broadcast_to", "transpose", "cast", "expand_dims", "squeeze", "neg",
             "add", "sub", "mul", "div"}
_NOT_FOLDED = object()
# ops whose value may share memory with their first input's
_VIEWS = {"reshape", "transpose", "broadcast_to", "identity", "getitem", "squeeze", "expand_dims",
          "stop_gradient", "cast"}


def _exposed(fetches) -> set:
    """uids of the fetches and of what they may be views of: a caller may change a fetched
    array in place, so none of these is folded into a constant that every replay shares."""
    exposed = set()
    for t in fetches:
        exposed.add(t.uid)
        while t.op.type in _VIEWS and t.op.inputs:
            t = t.op.inputs[0]
            exposed.add(t.uid)
    return exposed


def _folded(op: Op, values: list, exposed: set):
    """op's value computed now from its constant inputs, or _NOT_FOLDED: an input is not
    constant, the value is exposed to a caller (it stays a new array each replay), a large
    value is not kept, and a failing kernel fails at each replay as before."""
    out = op.outputs[0]
    if (len(op.outputs) != 1 or out.uid in exposed or out.size > FOLD_MAX_SIZE
            or any(v is _NOT_FOLDED for v in values)):
        return _NOT_FOLDED
    try:
        with np.errstate(all="ignore"):
            return op.kernel(*values)
    except Exception:  # noqa: BLE001 - the replay raises it, where it did before
        return _NOT_FOLDED


# ----- buffer donation -----
# A large temporary that dies at an add or a multiply can hold that op's result:
# no new allocation, no page faults, one array fewer at the peak. Only arrays
# that a fresh-array kernel made and that only fresh-array kernels read are
# donated, so no view or alias of a donated array can exist.
_FRESH = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.abs,
          np.sign, np.exp, np.log, np.sqrt, np.square, np.sin, np.cos, np.tanh, np.where,
          np.maximum, np.minimum, _accumulate}
_IN_PLACE = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
             operator.truediv: np.true_divide, _accumulate: None}
DONATE_MIN_SIZE = 4096
# a folded value stays in memory between replays: only small ones, never a donation candidate
FOLD_MAX_SIZE = DONATE_MIN_SIZE - 1


def _donatable(ops: list[Op], kept: set) -> set:
    """uids of tensors whose replay arrays nothing else can see: safe to overwrite."""
    # only arrays large enough to be donated are tracked (a long chain of small ones adds none)
    fresh = {op.outputs[0].uid for op in ops if op.kernel in _FRESH and len(op.outputs) == 1
             and op.outputs[0].size >= DONATE_MIN_SIZE}
    for op in ops:
        if op.kernel not in _FRESH:
            fresh.difference_update(t.uid for t in op.inputs)
    return {uid for uid in fresh if uid not in kept}


def _donating_kernel(op: Op, k: int, last_use: dict, donors: set):
    if op.kernel not in _IN_PLACE:
        return op.kernel
    out = op.outputs[0]
    for i, t in enumerate(op.inputs[:2]):
        if (t.uid in donors and last_use[t.uid] is op and t.shape == out.shape
                and t.dtype == out.dtype and t.size >= DONATE_MIN_SIZE):
            return _accumulate_into(i) if op.kernel is _accumulate else _into(_IN_PLACE[op.kernel], i)
    return op.kernel


def _into(ufunc, i: int):
    if i == 0:
        return lambda a, b: ufunc(a, b, out=a)
    return lambda a, b: ufunc(a, b, out=b)


def _accumulate_into(i: int):
    def kernel(*values):
        total = np.add(values[0], values[1], out=values[i])  # the same sums as _accumulate
        for value in values[2:]:
            total += value
        return total
    return kernel


def _instruction(kernel, out: int, ins: list[int]) -> tuple:
    if len(ins) == 1:
        return (kernel, out, ins[0], -1)
    if len(ins) == 2:
        return (kernel, out, ins[0], ins[1])
    return (kernel, out, tuple(ins), -2)


def _last_uses(ops: list[Op]) -> dict[int, Op]:
    """Each read tensor's last reader: the op itself, so that a long graph's map holds no
    int object per tensor (it is the compile's largest transient)."""
    last: dict[int, Op] = {}
    for op in ops:
        for t in op.inputs:
            last[t.uid] = op
    return last


class _SlotAllocator:
    """Assigns value slots, reusing a slot once the value in it is dead."""

    def __init__(self) -> None:
        self.count = 0
        self.by_tensor: dict[int, int] = {}
        self.pinned: set[int] = set()
        self.free_slots: list[int] = []

    def _new(self) -> int:
        if self.free_slots:
            return self.free_slots.pop()
        self.count += 1
        return self.count - 1

    def pin(self, t: Tensor) -> int:
        """A slot that is never reused: feeds, variables, constants."""
        if t.uid not in self.by_tensor:
            self.count += 1
            self.by_tensor[t.uid] = self.count - 1
            self.pinned.add(t.uid)
        return self.by_tensor[t.uid]

    def take(self, t: Tensor) -> int:
        slot = self._new()
        self.by_tensor[t.uid] = slot
        return slot

    def take_anonymous(self) -> int:
        return self._new()

    def free(self, slot: int) -> None:
        self.free_slots.append(slot)

    def slot_of(self, t: Tensor) -> int:
        return self.by_tensor[t.uid]

    def release_dead(self, inputs, op: Op, last_use: dict, fetch_ids: set) -> None:
        by_tensor = self.by_tensor
        for t in inputs:  # a tensor read twice is popped once
            uid = t.uid
            if (last_use[uid] is op and uid in by_tensor and uid not in self.pinned
                    and uid not in fetch_ids):
                self.free_slots.append(by_tensor.pop(uid))  # dead: forget it
