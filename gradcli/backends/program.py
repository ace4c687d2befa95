"""What every backend's built experiment offers the runner, in plain numpy."""
from __future__ import annotations

import numpy as np

from ..record import Factory, record

SMALL = 64  # up to this many parameter elements, training records every step's values


@record
class Convention:
    """Where a framework's own convention differs from spec-v1 (and what gradcli reports)."""

    topic: str
    text: str
    output: str | None = None
    input: str | None = None


@record(frozen=False)
class TrainRecord:
    """Loss before each step, and (for small models) parameters and gradients per step."""

    loss: list
    params: dict
    gradients: list
    final: dict = Factory(dict)
    final_loss: float | None = None


class Program:
    """A spec built once on one backend; each method replays it."""

    def __init__(self, experiment) -> None:
        self.experiment = experiment
        self.override_matches: list = []             # [(OverrideEntry, ops it matched)]
        self.conventions: list[Convention] = []      # where the framework's own convention differs
        self.warnings: list[str] = []                # what the run should tell its reader
        self.numeric_kinds: dict = {}                # {output: {input: "full" | "directional"}},
                                                     # filled by numeric(): what it did

    def values(self) -> dict:
        """Every let and output by name."""
        raise NotImplementedError

    def gradients(self, kind: str) -> dict:
        """{output: {input: array or None}} for kind 'overridden' or 'true'."""
        raise NotImplementedError

    def numeric(self, max_probes: int, directions: int) -> dict:
        """Finite-difference gradients, directional beyond max_probes elements (of the tensor
        probed, input or let); records which it did in numeric_kinds."""
        raise NotImplementedError

    def train(self, progress=None) -> TrainRecord:
        raise NotImplementedError

    def expr_of(self, name: str):
        """The expression that defines a let or an output (for errors that point into the spec)."""
        exp = self.experiment
        for out in exp.outputs:
            if out.name == name:
                return out.expr
        return next((let.expr for let in exp.lets if name in let.names), exp.outputs[0].expr)


def note_loss_shape(program, shape: tuple) -> None:
    """A non-scalar loss is trained on its sum (as tf.train optimizers do): say so."""
    if tuple(shape) != ():
        name = program.experiment.train.loss
        program.warnings.append(f"train.loss {name!r} has shape {tuple(shape)}, not a scalar: "
                                "training minimizes (and reports) its sum, as tf.train "
                                "optimizers do with a non-scalar loss")


def loss_value(array) -> float:
    """The loss a step reports: the sum of a non-scalar loss (what its gradient is of)."""
    return float(np.sum(np.asarray(array)))


def small(arrays) -> bool:
    return sum(int(np.size(a.numpy() if hasattr(a, "numpy") else a)) for a in arrays) <= SMALL
