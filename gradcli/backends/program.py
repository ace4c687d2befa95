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

    def values(self) -> dict:
        """Every let and output by name."""
        raise NotImplementedError

    def gradients(self, kind: str) -> dict:
        """{output: {input: array or None}} for kind 'overridden' or 'true'."""
        raise NotImplementedError

    def numeric(self, max_probes: int, directions: int) -> dict:
        """Finite-difference gradients, directional beyond max_probes elements."""
        raise NotImplementedError

    def train(self, progress=None) -> TrainRecord:
        raise NotImplementedError


def small(arrays) -> bool:
    return sum(int(np.size(a.numpy() if hasattr(a, "numpy") else a)) for a in arrays) <= SMALL
