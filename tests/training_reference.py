"""Independent torch references for the training experiments (tests/test_training_experiments.py).

Written from spec-v2's definitions, never from gradcli's code: the split,
standardization, epoch order and schedules of tests/spec_v2.py, the straight-through
estimators as torch.autograd.Function, tf.compat.v1.train's update rules
(hyper-parameters as float32 constants cast to float64), spec-v2's evaluation
points, and the three models as the specs write them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits
from spec_v2 import batches, learning_rate, split, standardized

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
T = torch.float64


# ----- the data sets, read directly; spec-v2's split and standardization (tests/spec_v2.py) -----

def parts(x: np.ndarray, y: np.ndarray, test: float, seed: int, standardize: bool) -> dict:
    test_rows, train_rows = split(len(x), test, seed)
    x_train, x_test = x[train_rows], x[test_rows]
    if standardize:
        x_train, x_test = standardized(x_train, x_test)
    return {"train": (x_train, y[train_rows]), "test": (x_test, y[test_rows])}


def digits() -> tuple[np.ndarray, np.ndarray]:
    x, y = load_digits(return_X_y=True)
    return x.astype(np.float64), y.astype(np.int64)


def two_domains() -> tuple[np.ndarray, np.ndarray]:
    """The csv's columns x1, x2, domain are the features; `label` is the label."""
    rows = np.loadtxt(EXPERIMENTS / "data" / "two_domains.csv", delimiter=",", skiprows=1)
    return rows[:, :3], rows[:, 3].astype(np.int64)


# ----- the estimators, as a person would write them in torch -----

class STE(torch.autograd.Function):
    """A straight-through estimator: f forward (torch.sign; torch.round, half to even as
    tf.round); backward dy (identity, window None) or dy where |x| <= window (hard-tanh)."""

    @staticmethod
    def forward(ctx, x, f, window):
        ctx.save_for_backward(x)
        ctx.window = window
        return f(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return (dy if ctx.window is None else torch.where(x.abs() <= ctx.window, dy, 0.0)), None, None


def window(kind: str, c: float = 1.0) -> float | None:
    """The spec's estimator name as STE's window: identity passes dy everywhere, hardtanh
    where |x| <= c (the specs' c is 1; the clip-range sweep narrows it)."""
    return None if kind == "identity" else c


class Reverse(torch.autograd.Function):
    """Gradient reversal: identity forward, -scale * dy backward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, dy):
        return -ctx.scale * dy, None


def cross_entropy(logits, y, classes):
    """-sum(one_hot * log_softmax) per row, as the specs write it."""
    return -(torch.nn.functional.one_hot(y, classes).to(T) * torch.log_softmax(logits, dim=1)).sum(dim=1)


def accuracy(logits, y):
    return (logits.argmax(dim=1) == y).to(T).mean()


# ----- tf.compat.v1.train's update rules, with float32 hyper-parameters -----

def f32(v: float) -> float:
    """A Python float as tf.train uses it on a float64 variable: float64(float32(v))."""
    return float(np.float32(v))


class Optimizer:
    """sgd, momentum (MomentumOptimizer, not nesterov) and rmsprop (RMSPropOptimizer, momentum 0)."""

    def __init__(self, params: dict, name: str, hyper: dict, schedule: dict | None):
        self.params, self.name, self.hyper = params, name, hyper
        self.schedule = next(iter(schedule.items())) if schedule else None  # {kind: params}
        ones = name == "rmsprop"  # RMSProp's mean square starts at ones
        self.slots = {k: torch.ones_like(p) if ones else torch.zeros_like(p) for k, p in params.items()}

    def step(self, grads: dict, t: int) -> None:
        lr = learning_rate(f32(self.hyper["lr"]), self.schedule, t)
        with torch.no_grad():
            for k, p in self.params.items():
                g, slot = grads[k], self.slots[k]
                if self.name == "sgd":
                    p -= lr * g
                elif self.name == "momentum":
                    slot.mul_(f32(self.hyper["momentum"])).add_(g)
                    p -= lr * slot
                else:
                    slot += (g * g - slot) * (1 - f32(0.9))
                    p -= lr * g / torch.sqrt(slot + f32(1e-10))


def train(model, params: dict, data: dict, *, seed: int, epochs: int, batch_size: int | None,
          optimizer: str, hyper: dict, schedule=None, constraints=None, eval_every: int = 1) -> dict:
    """spec-v2's training loop; returns the JSON `train` document's numbers.

    model(params, x, y) -> (loss, {metric: value}) on torch tensors.
    """
    params = {k: torch.tensor(v, dtype=T, requires_grad=True) for k, v in params.items()}
    tensors = {part: (torch.tensor(x, dtype=T), torch.tensor(y)) for part, (x, y) in data.items()}
    opt = Optimizer(params, optimizer, hyper, schedule)
    out = {"loss": [], "eval_steps": [], "metrics": {}}

    def evaluate(t):
        out["eval_steps"].append(t)
        with torch.no_grad():
            for part, (x, y) in tensors.items():
                for name, value in model(params, x, y)[1].items():
                    out["metrics"].setdefault(name, {}).setdefault(part, []).append(float(value))

    t = 0
    evaluate(0)
    x_train, y_train = tensors["train"]
    for epoch in range(epochs):
        for rows in batches(len(y_train), batch_size, seed, epoch):
            rows = torch.as_tensor(rows)
            loss, _ = model(params, x_train[rows], y_train[rows])
            out["loss"].append(loss.item())
            grads = dict(zip(params, torch.autograd.grad(loss, list(params.values())), strict=True))
            opt.step(grads, t)
            if constraints:
                with torch.no_grad():
                    constraints(params)
            t += 1
        if (epoch + 1) % eval_every == 0:
            evaluate(t)
    if out["eval_steps"][-1] != t:
        evaluate(t)
    with torch.no_grad():
        final_loss = float(model(params, x_train, y_train)[0])
    out["final"] = {"loss": final_loss, **{m: {p: v[-1] for p, v in parts_.items()}
                                           for m, parts_ in out["metrics"].items()}}
    out.update(steps=t, epochs=epochs, params={k: p.detach().numpy() for k, p in params.items()})
    return out


# ----- the three models, as the specs write them -----

def binaryconnect(kind: str, c: float = 1.0):
    c = window(kind, c)

    def model(p, x, y):
        h = torch.relu(x @ STE.apply(p["W1"], torch.sign, c) * 0.125 + p["b1"])
        logits = h @ STE.apply(p["W2"], torch.sign, c) * 0.25 + p["b2"]
        return cross_entropy(logits, y, 10).mean(), {"accuracy": accuracy(logits, y)}
    return model


def clip_weights(p):
    p["W1"].clamp_(-1, 1)
    p["W2"].clamp_(-1, 1)


def quantized(kind: str):
    c = window(kind)

    def q(v, lo, hi):  # clip's gradient is dy inside [lo, hi] (bounds included), as tf.clip_by_value
        return STE.apply(torch.clamp(v, lo, hi) * 3, torch.round, c) / 3

    def model(p, x, y):
        h = q(x @ q(p["W1"], -1, 1) * 0.25 + p["b1"], 0, 1)
        logits = h @ q(p["W2"], -1, 1) * 2 + p["b2"]
        return cross_entropy(logits, y, 10).mean(), {"accuracy": accuracy(logits, y)}
    return model


def softplus(z):
    return torch.logaddexp(z, torch.zeros_like(z))  # log(1 + exp(z)) without torch's threshold


def domain_adversarial(scale: float):
    def model(p, x, y):
        d = x[:, 2]
        h = torch.tanh(x[:, 0:2] @ p["W"] + p["b"])
        logits = h @ p["V"] + p["c"]
        z = Reverse.apply(h, scale) @ p["u"] + p["e"]
        domain_loss = torch.mean(softplus(z) - d * z)
        loss = torch.sum(cross_entropy(logits, y, 2) * (1 - d)) / torch.sum(1 - d) + domain_loss
        correct = (logits.argmax(dim=1) == y).to(T)
        return loss, {"target_accuracy": torch.sum(correct * d) / torch.sum(d),
                      "source_accuracy": torch.sum(correct * (1 - d)) / torch.sum(1 - d),
                      "domain_loss": domain_loss}
    return model


def first_batch_gradient(model, params: dict, data: dict, *, seed: int, batch_size: int | None,
                         name: str) -> np.ndarray:
    """d loss / d params[name] on the first training batch of epoch 0, before any step."""
    p = {k: torch.tensor(v, dtype=T, requires_grad=True) for k, v in params.items()}
    x, y = data["train"]
    rows = batches(len(y), batch_size, seed, 0)[0]
    loss, _ = model(p, torch.tensor(x[rows], dtype=T), torch.tensor(y[rows]))
    return torch.autograd.grad(loss, [p[name]])[0].numpy()
