"""Replaying the graph: compile the ops a set of fetches needs into a flat schedule once,
then run it as often as needed with new variable values or feeds. A fetch set evaluated
for the first time is not compiled: it is evaluated once, directly (oneshot.py).

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

import gc as _gc
import operator
import threading
from contextlib import contextmanager
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import GraphError
from .codegen import CODEGEN_AFTER, CODEGEN_MAX, generate, item_getter
from .graph import Op, Tensor, Variable, walk_ops
from .oneshot import evaluate_once
from .ops_array import _accumulate

_CACHE: dict[tuple, "Schedule"] = {}
_CACHE_SIZE = 256
# fetch sets evaluated once without a schedule: the second evaluation compiles one
_SEEN: dict[tuple, None] = {}


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


@contextmanager
def collector_paused():
    """Building many small objects: the garbage collector would only slow it down."""
    # Counted under a lock: with nested or concurrent pauses (two threads building) the
    # collector stays off until the last one ends, and is on again only if it was on when the
    # first began (each restoring what it found, the first to end re-enabled it under the other).
    with _PAUSE_LOCK:
        if not _PAUSED[0]:
            _PAUSED[1] = _gc.isenabled()
            _gc.disable()
        _PAUSED[0] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _PAUSED[0] -= 1
            if not _PAUSED[0] and _PAUSED[1]:
                _gc.enable()


_PAUSE_LOCK = threading.Lock()
_PAUSED = [0, False]  # pauses under way; whether the collector was on when the first began


def compile_schedule(fetches: Sequence[Tensor], fed: Sequence[Tensor] = (),
                     generated: bool = True) -> Schedule:
    """The cached schedule for these fetches and fed tensors, compiled on first use.
    generated=False: a caller that replays it a few dozen times at most (finite differences
    of a small x) keeps a new schedule in its loop, never generating its source."""
    key = (tuple(t.uid for t in fetches), tuple(t.uid for t in fed))
    schedule = _CACHE.get(key)
    if schedule is None:
        with collector_paused():
            schedule = Schedule(fetches, fed)
        if not generated:
            schedule.runs = None
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = schedule
    return schedule


def feed_value(t: Tensor, value):
    """value converted to t's dtype, checked against the shape the graph was built for."""
    array = np.asarray(value, dtype=t.dtype)
    if array.shape != t.shape:
        raise GraphError(f"cannot feed a value of shape {array.shape} for {t.name} of shape "
                         f"{t.shape}; the graph was built for that shape")
    return array[()] if array.ndim == 0 else array


def evaluate(fetches, feed: Mapping[Tensor, object] | None = None):
    """Values of one tensor or a list of tensors, with some tensors' values replaced by feed."""
    single = isinstance(fetches, Tensor)
    fetch_list = [fetches] if single else _fetch_list(fetches)
    feed = feed or {}
    fed = list(feed)
    key = (tuple(t.uid for t in fetch_list), tuple(t.uid for t in fed))
    feed_values = [feed_value(t, feed[t]) for t in fed]
    if key in _CACHE or key in _SEEN:
        _SEEN.pop(key, None)
        values = compile_schedule(fetch_list, fed).run(feed_values)
    else:
        # A graph evaluated once (a CLI run) needs no replay: no slots, no donation analysis.
        if len(_SEEN) >= _CACHE_SIZE:
            _SEEN.pop(next(iter(_SEEN)))
        _SEEN[key] = None
        values = evaluate_once(fetch_list, fed, feed_values)
    # Copies, so that a caller changing a result cannot change a constant or a variable.
    values = [np.array(v) if isinstance(v, np.ndarray) else v for v in values]
    return values[0] if single else values


def _fetch_list(fetches) -> list[Tensor]:
    if isinstance(fetches, (Tensor, str, bytes)) or not hasattr(fetches, "__iter__"):
        items = [fetches]
    else:
        items = list(fetches)
    for t in items:
        if not isinstance(t, Tensor):
            hint = (" (minimize() and apply_gradients() apply their step when called and return "
                    "None: call them, then evaluate the loss or the variables)" if t is None else "")
            raise GraphError(f"evaluate() fetches tensors, got {type(t).__name__}{hint}")
    return items


class CompiledFunction:
    """A compiled replay as a callable: f(*feed_values) -> list of fetched values."""

    __slots__ = ("feeds", "schedule", "kept", "fed_as")

    def __init__(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor]) -> None:
        self.feeds = list(feeds)
        self.fed_as = [(t.shape, np.dtype(t.dtype)) for t in self.feeds]
        self.schedule = compile_schedule(_fetch_list(fetches), self.feeds)
        # the arrays every call shares (constants, folded values): a result that is one of
        # them, or a view of one, is copied, so a caller changing it changes nothing else
        self.kept = {id(_owner(v)) for v in self.schedule.template if isinstance(v, np.ndarray)}

    def __call__(self, *values) -> list:
        if len(values) != len(self.fed_as):  # zip would drop extras, the replay miss a value
            names = ", ".join(repr(t.name) for t in self.feeds)
            raise GraphError(f"this gc.function takes {len(self.fed_as)} feed value(s), one per "
                             f"feed ({names or 'none'}), in that order; got {len(values)}")
        # checked as evaluate's feed is (the replay keeps the shapes it was built for); an
        # array already of the fed shape and dtype, a training loop's case, passes as it is
        cast = None  # the values with the ones that needed it converted
        for k, (v, (shape, dtype)) in enumerate(zip(values, self.fed_as)):
            if not (type(v) is np.ndarray and v.dtype == dtype and v.shape == shape):
                if cast is None:
                    cast = list(values)
                cast[k] = feed_value(self.feeds[k], v)
        results = self.schedule.run(values if cast is None else cast)
        kept = self.kept.union(id(_owner(var._value)) for var, _ in self.schedule.variables)
        for k, v in enumerate(results):
            if isinstance(v, np.ndarray) and id(_owner(v)) in kept:
                results[k] = v.copy()
        return results


def _owner(array: np.ndarray):
    """The array that owns array's memory (array itself, or the base its view reads)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def function(fetches: Sequence[Tensor], feeds: Sequence[Tensor] = ()) -> Callable[..., list]:
    """The fetches' replay compiled once, as a callable f(*feed_values) -> list of values.

    The fastest way to run the same graph many times (training loops, sweeps):
    no cache look-up and no conversions per call.
    """
    return CompiledFunction(fetches, feeds)
