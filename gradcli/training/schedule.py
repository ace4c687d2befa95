"""Learning-rate schedules: the rate at optimizer step t, with spec-v2's exact formulas.

Computed in float64 from the spec's numbers; the optimizer rules then round the
rate through float32, as tf.train rounds a float32 learning-rate tensor fed with it.
"""
from __future__ import annotations

import math


def learning_rate(lr: float, schedule, t: int) -> float:
    """The learning rate of step t (0-based) for base rate lr and a ScheduleSpec (or None)."""
    if schedule is None:
        return lr
    p = schedule.params
    if schedule.kind == "cosine":
        s = p["steps"]
        return lr * 0.5 * (1 + math.cos(math.pi * min(t, s) / s))
    if schedule.kind == "step":
        return lr * _power(p["gamma"], math.floor(t / p["every"]))
    if schedule.kind == "exponential":
        return lr * _power(p["gamma"], t)
    raise ValueError(f"unknown schedule {schedule.kind!r}; expected cosine, step or exponential")


def _power(gamma: float, n: int) -> float:
    """gamma ** n in float64: inf past its range, as numpy gives it (Python raises there)."""
    try:
        return gamma ** n
    except OverflowError:  # gamma is positive (the spec refuses others)
        return math.inf


class Schedule:
    """A schedule as a callable of the step, for the Python API's optimizers:
    gc.train.GradientDescentOptimizer(Schedule(0.1, "cosine", steps=100))."""

    def __init__(self, lr: float, kind: str | None = None, **params) -> None:
        from ..spec.model import ScheduleSpec  # plain data, no YAML
        self.lr = float(lr)
        self.spec = None if kind is None else ScheduleSpec(kind, dict(params))

    def __call__(self, t: int) -> float:
        return learning_rate(self.lr, self.spec, t)
