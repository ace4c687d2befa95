"""What each training step is fed: batches of the data's training part, or nothing (v1).

The data set is split, scaled and batched by gradcli.data (prepare, batches), with
spec-v2's exact definitions; this file only counts steps and epochs and hands the
loop one batch at a time, plus the whole training and test parts for metrics.
"""
from __future__ import annotations

import math
from itertools import count, repeat

from ..spec.expect import refuse_long_loss

MAX_TOTAL_STEPS = 1_000_000  # epochs x batches per epoch, when steps does not cap it


class Feed:
    """The batches of one run, in order, and the two parts metrics are evaluated on."""

    def __init__(self, experiment) -> None:
        self.experiment, spec = experiment, experiment.train
        data = experiment.data
        self.parts = None
        if data is None:
            self.total = spec.steps
            self.per_epoch = None
            return
        from .. import data as datasets  # numpy (and scikit-learn for bundled sets) only
        self.datasets = datasets
        self.parts = datasets.prepare(data, experiment.seed, experiment.dtype)
        n_train = len(self.parts.y_train)
        self.batch_size = min(spec.batch_size or n_train, n_train) or 1
        self.per_epoch = max(1, math.ceil(n_train / self.batch_size))
        if spec.epochs is None:
            self.total = spec.steps
        else:
            self.total = spec.epochs * self.per_epoch
            if spec.steps is not None:
                self.total = min(self.total, spec.steps)
        if self.total > MAX_TOTAL_STEPS:
            key = "train.epochs"
            raise spec.keys.get(key, spec.loc).error(
                f"{spec.epochs} epochs of {self.per_epoch} batches are {self.total} steps, more "
                f"than the {MAX_TOTAL_STEPS} a run may take", key=key,
                hint="cap them with steps: N or use a larger batch_size")
        expect = experiment.expect  # against train.steps at load; epochs' count needs the data
        if expect is not None and spec.epochs is not None and self.total != spec.steps:
            refuse_long_loss(expect.train_loss, expect.train_loss_at, self.total,
                             f"{spec.epochs} epoch{'s' if spec.epochs != 1 else ''} of "
                             f"{self.per_epoch} batches of {n_train} training rows are "
                             f"{self.total} steps")

    @property
    def with_data(self) -> bool:
        return self.parts is not None

    def batches(self):
        """(epoch, batch, last of its epoch) for every step; batch is {features: x, labels: y}
        (a view or a reused buffer: use it before asking for the next), None without data."""
        if self.parts is None:
            for _ in range(self.total):
                yield 0, None, False
            return
        data, seed = self.experiment.data, self.experiment.seed
        names = (data.features, data.labels)
        ends = [False] * (self.per_epoch - 1) + [True]  # per batch: the last of its epoch?
        for epoch in count():
            # zip, map and yield from are C-level: each step resumes one generator, data's
            # (batches: per_epoch of them, the last one shorter if it must)
            pairs = self.datasets.batches(self.parts, self.batch_size, seed, epoch)
            yield from zip(repeat(epoch), map(dict, map(zip, repeat(names), pairs)), ends)

    def part(self, name: str):
        """The whole training ("train") or test ("test") part as a feed; None when the run has
        no such part (no data, or no test share)."""
        if self.parts is None:
            return None
        p, data = self.parts, self.experiment.data
        x, y = (p.x_train, p.y_train) if name == "train" else (p.x_test, p.y_test)
        if name == "test" and len(y) == 0:
            return None
        return {data.features: x, data.labels: y}

    def part_names(self) -> list[str]:
        if self.parts is None:
            return ["train"]
        return ["train"] + (["test"] if len(self.parts.y_test) else [])
