"""The one training loop, for every backend: steps (over epochs of batches with data), the
learning rate of each step, clipped overridden gradients, optimizer updates, constraints,
metrics at their evaluation points and what a non-finite loss does (spec-v2).

A backend takes part through a Trainee (below): it feeds a batch to the spec it built once,
returns the loss and the gradients training uses, applies one update, and evaluates the
spec's metric and constraint expressions. The loop owns every decision about order.

A Trainee may also offer fused_step (the numpy core does: a small model's step costs a few
hundred µs, and each call between loop and trainee is part of it): the same calls in the
same order in one, stopping where the loop has a decision to make (a non-finite loss or
update) and saying how far it went; the loop takes over from there.
"""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from ..backends.program import Nonfinite, TrainRecord, birth, nonfinite_kind, small
from ..errors import GradcliError
from ..lang.interpret import spec_error
from ..lang.places import Place
from ..spelling import KIND_TEXT, number_text
from .feed import Feed
from .schedule import learning_rate

FLOAT32_MAX = float(np.finfo(np.float32).max)


class NonfiniteLoss(GradcliError):
    """on_nonfinite: error, and the loss was NaN or infinite (exit code 1)."""

    exit_code = 1
    name = ""  # the spec's (experiment.name), which `run -q` names on its FAILED line


class Trainee(Protocol):
    """What one backend's built spec offers the loop (values in numpy at the boundary)."""

    names: list  # the trainable float inputs, in the spec's order

    def feed(self, batch: dict | None) -> None:
        """Give the data names these rows (None: keep the spec's own values)."""

    def loss_and_gradients(self) -> tuple:
        """(loss as a float, the clipped overridden gradients in the backend's own form)."""

    def gradient_values(self, grads) -> dict:
        """{name: numpy array} of the gradients that are not None (for the small-model record)."""

    def apply(self, grads, lr: float) -> None:
        """One optimizer update with this step's learning rate."""

    def snapshot(self):
        """The variables' values before an update, cheaply (for locating a non-finite step)."""

    def nonfinite(self, step: int, loss: float, snapshot):
        """A Nonfinite for where step's non-finite loss or update was born; None when finite."""

    def read(self) -> dict:
        """{name: numpy array} of the trainable variables."""

    def assign(self, values: dict) -> None:
        """Set some trainable variables to these numpy values."""

    def loss(self) -> float:
        """The loss at the current feed and values."""

    def evaluate(self, kind: str) -> dict:
        """{name: numpy value} of the spec's "metrics" or "constraints" at the current feed."""

    def locate(self, kind: str, name: str, label: str, step: int):
        """A Nonfinite (pass "train", tensor `label`) for where the non-finite value of the
        spec's metric or constraint `name` was born, at the current feed and values; None
        when it finds none."""

    def done(self) -> None:
        """Training is over: the data names hold the spec's own values (the first batch) again,
        so what the program answers afterwards (replays, curves) is what it answered before."""

    # optional: fused_step(batch, rate_at, step, constrain) -> (loss, grads, left, before), see
    # NumpyTrainee.fused_step; used when no per-step record is kept and no update was
    # non-finite yet


def train(trainee: Trainee, experiment, progress=lambda it, **kw: it) -> TrainRecord:
    """Train per experiment.train on the trainee and record what spec-v2's `train` reports."""
    spec, feed = experiment.train, Feed(experiment)
    names = list(trainee.names)
    record = TrainRecord(loss=[], params={n: [] for n in names}, gradients=[])
    keep = small(list(trainee.read().values()))
    checks = _Checks(experiment, trainee)
    last_eval = None
    if spec.metrics:
        last_eval = _evaluate(trainee, feed, record, 0, checks)
    epoch, step = -1, 0
    batches = feed.batches()
    # read once, not every step (a step of a small model costs a few hundred µs)
    lr, schedule, on_nonfinite = spec.hyper["lr"], spec.schedule, spec.on_nonfinite
    feed_batch, step_values, apply = trainee.feed, trainee.loss_and_gradients, trainee.apply
    snapshot, nonfinite, evaluate = trainee.snapshot, trainee.nonfinite, trainee.evaluate
    constraints, metrics, assign = spec.constraints, spec.metrics, trainee.assign
    fused = None if keep else getattr(trainee, "fused_step", None)
    constrain = bool(constraints)

    def rate_at(t: int) -> float:  # asked when an update is applied, as apply's argument was
        if schedule is None:
            return lr
        rate = learning_rate(lr, schedule, t)
        if not rate <= FLOAT32_MAX:  # tf.train rounds it to an infinite float32
            with np.errstate(over="ignore"):
                beyond = np.isinf(np.float32(rate))
            if beyond:
                raise _schedule_error(spec, t, rate)
        return rate

    losses = record.loss
    for step in progress(range(feed.total), description="training"):
        epoch, batch, epoch_end = next(batches)
        if fused is not None and record.nonfinite is None:
            loss, grads, left, before = fused(batch, rate_at, step, constrain)
        else:
            feed_batch(batch)
            loss, grads = step_values()
            left = "update"
        losses.append(loss)
        if left:  # else the fused step did it all: a finite loss, update and constraints
            if keep:  # the stopping step's gradients too: they say what the update would be
                record.gradients.append(trainee.gradient_values(grads))
            if not math.isfinite(loss) and on_nonfinite != "continue":
                found = checks.loss_birth(trainee.nonfinite(step, loss, None))
                if on_nonfinite == "error":
                    stop = NonfiniteLoss(_stop_text(experiment, step, loss, found))
                    stop.name = experiment.name
                    raise stop
                record.nonfinite = record.nonfinite or found
                record.stopped = {"step": step, "reason": "non-finite loss", "nonfinite": found}
                break
            if left == "update":
                before = snapshot() if record.nonfinite is None else None
                apply(grads, rate_at(step))
            if record.nonfinite is None:
                record.nonfinite = checks.updated(nonfinite(step, loss, before))
            if constraints:
                values = checks.constraints(evaluate("constraints"))
                if record.nonfinite is None:  # located before the values replace the variables
                    record.nonfinite = checks.nonfinite("constraints", values, None, step)
                assign(values)
            if keep:
                for n, value in trainee.read().items():
                    record.params[n].append(value)
        record.steps = step + 1
        if metrics and _eval_point(spec, feed, step + 1, epoch, epoch_end):
            last_eval = _evaluate(trainee, feed, record, step + 1, checks)
    record.epochs = epoch + 1 if feed.with_data else None
    if spec.metrics and last_eval != record.steps:
        _evaluate(trainee, feed, record, record.steps, checks)
    record.final = trainee.read()
    trainee.feed(feed.part("train"))
    record.final_loss = trainee.loss()
    if record.nonfinite is None and not math.isfinite(record.final_loss):
        # every step's loss and update finite, and yet the last update left a loss that is not
        # (log(w) after w crossed 0): located at the final values, as a step's loss would be,
        # and named by its JSON key
        found = checks.loss_birth(trainee.nonfinite(record.steps, record.final_loss, None))
        if found is not None:
            record.nonfinite = Nonfinite("train", found.op, found.expr, found.location,
                                         "final_loss", found.value, found.born, found.step)
    if spec.metrics:
        record.final_metrics = {m: {part: values[-1] for part, values in per_part.items()}
                                for m, per_part in record.metrics.items()}
    trainee.done()
    return record


def _eval_point(spec, feed: Feed, done: int, epoch: int, epoch_end: bool) -> bool:
    """After `done` steps: every eval_every epochs with data (at an epoch's end), every
    eval_every steps without."""
    if feed.with_data:
        return epoch_end and (epoch + 1) % spec.eval_every == 0
    return done % spec.eval_every == 0


def _evaluate(trainee: Trainee, feed: Feed, record: TrainRecord, done: int, checks) -> int:
    """The metrics on the training part and the test part, after `done` steps."""
    record.eval_steps.append(done)
    for part in feed.part_names():
        trainee.feed(feed.part(part))
        values = checks.metrics(trainee.evaluate("metrics"))
        for name, value in values.items():
            record.metrics.setdefault(name, {}).setdefault(part, []).append(value)
        if record.nonfinite is None:  # located while this part is fed
            record.nonfinite = checks.nonfinite("metrics", values, part, done)
    return done


class _Checks:
    """What the spec promised of its expressions, checked on their first values: a constraint
    has its variable's shape, a metric is one number; and where a value of one was first
    non-finite (spec-v2: `expect: {finite: true}` fails when anything is)."""

    def __init__(self, experiment, trainee: Trainee) -> None:
        self.experiment, self.spec, self.trainee = experiment, experiment.train, trainee
        self.shapes = None
        self.moved: dict = {}  # trained variable -> the birth that made it non-finite

    def constraints(self, values: dict) -> dict:
        if self.shapes is None:
            self.shapes = {n: np.shape(v) for n, v in self.trainee.read().items()}
            for name, value in values.items():
                if np.shape(value) != self.shapes[name]:
                    raise spec_error(self.spec.constraints[name],
                                     f"train.constraints.{name} gives shape {np.shape(value)}; "
                                     f"it replaces {name!r}, whose shape is {self.shapes[name]}")
        return values

    def metrics(self, values: dict) -> dict:
        out = {}
        for name, value in values.items():
            if np.size(value) != 1:
                raise spec_error(self.spec.metrics[name],
                                 f"train.metrics.{name} gives shape {np.shape(value)}; a metric "
                                 "is one number (reduce it, e.g. with mean(...))")
            out[name] = float(np.asarray(value, dtype=np.float64).reshape(()))
        return out

    def nonfinite(self, kind: str, values: dict, part: str | None, step: int):
        """The birth of the first non-finite value among a kind's values (None: all finite),
        with its tensor named by the JSON's path: metrics.<name>.<part>, constraints.<name>.
        Where the backend finds no op (a literal NaN), the expression itself is the birth."""
        for name, value in values.items():
            kind_of = None if _finite(value) else nonfinite_kind(value)
            if kind_of is not None:
                label = f"{kind}.{name}" + (f".{part}" if part else "")
                found = self.trainee.locate(kind, name, label, step)
                if found is None:
                    expr = getattr(self.spec, kind)[name]
                    found = birth(self.experiment, "train", label, kind_of, kind_of, None,
                                  Place(expr, expr.node), step=step)
                if kind == "constraints":
                    self.moved[name] = found
                return found
        return None

    def updated(self, found):
        """An update's birth (or None), as the birth of the variables it made non-finite."""
        if found is not None:
            for name, value in self.trainee.read().items():
                if nonfinite_kind(value):
                    self.moved.setdefault(name, found)
        return found

    def loss_birth(self, found):
        """A non-finite loss traced to a trained variable (op input) that training made
        non-finite was born where training did (spec-v2: the first op in evaluation order),
        not at the variable's declaration: the loss's record with that birth's place and step."""
        if found is None or found.op != "input" or found.expr not in self.moved:
            return found
        born = self.moved[found.expr]
        return Nonfinite("train", born.op, born.expr, born.location, found.tensor, found.value,
                         born.born, born.step)


def _finite(value) -> bool:
    """Whether every element is finite, cheaply (constraints are checked every step): a NaN or
    inf element makes the sum non-finite; a sum that is not finite is checked element by
    element (it may have only overflowed)."""
    if isinstance(value, float):
        return math.isfinite(value)
    array = np.asarray(value)
    if array.dtype.kind not in "fc":
        return True
    with np.errstate(over="ignore"):
        total = np.add.reduce(array, axis=None)
    return bool(np.isfinite(total)) or nonfinite_kind(array) is None


def _schedule_error(spec, step: int, rate: float):
    key = "train.schedule"
    return spec.keys.get(key, spec.loc).error(
        f"the learning rate at step {step} is {rate:g}, beyond float32's range (max "
        f"{FLOAT32_MAX:.7g}): tf.train feeds the rate as a float32 tensor", key=key,
        hint="lower lr or the schedule's gamma, or cap steps")


def _stop_text(experiment, step: int, loss: float, found) -> str:
    where = ""
    if found is not None:
        at = f" ({found.location})" if found.location else ""
        where = f"; born as {KIND_TEXT[found.born]} at {found.expr or found.op}{at}"
    return (f"train.loss {experiment.train.loss!r} is {number_text(loss)} at step {step}{where} "
            "(on_nonfinite: error)")
