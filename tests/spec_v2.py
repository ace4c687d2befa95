"""spec-v2's training definitions, computed here with numpy from the contract's words (never
from gradcli's code): the split, standardization, epoch order and learning-rate schedules that
the independent references (tests/training_reference.py on torch, tests/training/oracle.py on
TensorFlow) train by."""
from __future__ import annotations

import math

import numpy as np


def split(n: int, test: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(test rows, training rows): perm[:n_test] and perm[n_test:] of default_rng([seed, 1])."""
    perm = np.random.default_rng([seed, 1]).permutation(n)
    n_test = round(test * n)
    return perm[:n_test], perm[n_test:]


def standardized(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both parts scaled by the training part's mean and std (ddof 0); a constant column is
    only centred."""
    mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    std = np.where(std == 0, 1.0, std)
    return (x_train - mean) / std, (x_test - mean) / std


def batches(n_train: int, batch_size: int | None, seed: int, epoch: int) -> list[np.ndarray]:
    """Epoch `epoch` visits default_rng([seed, 2, epoch]).permutation(n_train) in batches (one
    batch of every row without a batch_size)."""
    order = np.random.default_rng([seed, 2, epoch]).permutation(n_train)
    size = batch_size or n_train
    return [order[i:i + size] for i in range(0, n_train, size)]


def learning_rate(lr: float, schedule: tuple[str, dict] | None, t: int) -> float:
    """The rate at step t under a schedule (kind, params): cosine, step or exponential."""
    if schedule is None:
        return lr
    kind, p = schedule
    if kind == "cosine":
        return lr * 0.5 * (1 + math.cos(math.pi * min(t, p["steps"]) / p["steps"]))
    if kind == "step":
        return lr * p["gamma"] ** math.floor(t / p["every"])
    return lr * p["gamma"] ** t
