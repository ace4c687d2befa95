"""Evaluating the graph: gc.evaluate, gc.function, and the cache of compiled schedules.

A fetch set evaluated for the first time is not compiled: it is evaluated once, directly
(oneshot.py). The second evaluation compiles its ops into a flat schedule (schedule.py),
kept here and replayed as often as needed with new variable values or feeds.
"""
from __future__ import annotations

import gc as _gc
import threading
from contextlib import contextmanager
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import GraphError
from .graph import Tensor
from .oneshot import evaluate_once
from .schedule import Schedule

_CACHE: dict[tuple, "Schedule"] = {}
_CACHE_SIZE = 256
# fetch sets evaluated once without a schedule: the second evaluation compiles one
_SEEN: dict[tuple, None] = {}


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
