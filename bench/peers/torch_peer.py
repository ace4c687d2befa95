"""torch eager on CPU: torch.autograd.grad per run; custom gradient by torch.autograd.Function."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from bench.peers import Case

VERSION = torch.__version__


class SignSTE(torch.autograd.Function):
    """sign forward, hard-tanh straight-through backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.where(x.abs() <= 1, g, 0.0)


def _leaf(a):
    return torch.as_tensor(a).requires_grad_()


def _value_and_grads(f, *leaves):
    def run():
        y = f(*leaves)
        return y.detach(), torch.autograd.grad(y, leaves)
    return run


def w1(d, variant=None) -> Case:
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = torch.tanh(y * 1.0001 + 0.1)
        return y

    return Case(_value_and_grads(f, _leaf(d["x"])))


def w2(d, variant=None) -> Case:
    f = lambda x, w: torch.sum(SignSTE.apply(x) * w + 0.5 * x * x)  # noqa: E731
    return Case(_value_and_grads(f, _leaf(d["x"]), _leaf(d["w"])))


def mlp_loss(X, W1, b1, W2, labels):
    return F.cross_entropy(torch.tanh(X @ W1 + b1) @ W2, labels)


def binaryconnect_loss(X, y, W1, b1, W2, b2):
    """W7's model: a hidden relu layer on hard-tanh sign weights, cross_entropy on the logits."""
    h = torch.relu(X @ SignSTE.apply(W1) * 0.125 + b1)
    return F.cross_entropy(h @ SignSTE.apply(W2) * 0.25 + b2, y)


def w3(d, variant=None) -> Case:
    labels = torch.as_tensor(d["labels"])
    f = lambda X, W1, b1, W2: mlp_loss(X, W1, b1, W2, labels)  # noqa: E731
    return Case(_value_and_grads(f, *(_leaf(d[k]) for k in ("X", "W1", "b1", "W2"))))


def w4(d, variant=None) -> Case:
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = y * 0.999 + 0.001
        return torch.sum(y)

    return Case(_value_and_grads(f, _leaf(d["x"])))


def w5(d, variant=None) -> Case:
    """The idiomatic loop: backward(), clip the .grad tensors (TensorFlow's formula), SGD step."""
    X, labels = torch.as_tensor(d["X"]), torch.as_tensor(d["labels"])
    params = [torch.tensor(d[k], requires_grad=True) for k in ("W1", "b1", "W2")]
    opt = torch.optim.SGD(params, lr=d["lr"])
    clip = d["clip"]

    def reset():
        with torch.no_grad():
            for p, k in zip(params, ("W1", "b1", "W2"), strict=True):
                p.copy_(torch.as_tensor(d[k]))

    def run():
        for _ in range(d["steps"]):
            opt.zero_grad(set_to_none=True)
            mlp_loss(X, *params, labels).backward()
            grads = [p.grad for p in params]
            norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
            scale = clip / torch.clamp(norm, min=clip)
            for g in grads:
                g.mul_(scale)
            opt.step()
        return [p.detach().clone() for p in params]

    return Case(run, reset=reset)


def w7(d, variant=None) -> Case:
    """The idiomatic eager loop: SignSTE (hard-tanh) weights, cross_entropy, backward(),
    RMSProp written as tf.train's kernel (torch.optim.RMSprop starts its mean square at zero and
    adds epsilon outside the root, so it trains to other numbers), then clamp_."""
    from bench.workloads import epoch_order, training_part

    params = [torch.tensor(d[k], requires_grad=True) for k in ("W1", "b1", "W2", "b2")]
    lr, rho, eps = (float(np.float32(v)) for v in (d["lr"], 0.9, 1e-10))

    def reset():
        with torch.no_grad():
            for p, k in zip(params, ("W1", "b1", "W2", "b2"), strict=True):
                p.copy_(torch.as_tensor(d[k]))

    def run():
        X, y = (torch.as_tensor(a) for a in training_part(d["x"], d["y"], d["seed"]))
        ms = [torch.ones_like(p) for p in params]
        for epoch in range(d["epochs"]):
            order = torch.as_tensor(epoch_order(len(y), d["seed"], epoch))
            for rows in torch.split(order, d["batch"]):
                for p in params:
                    p.grad = None
                binaryconnect_loss(X[rows], y[rows], *params).backward()
                with torch.no_grad():
                    for p, m in zip(params, ms, strict=True):
                        g = p.grad
                        m += (g * g - m) * (1 - rho)
                        p -= lr * g / torch.sqrt(m + eps)
                    params[0].clamp_(-1, 1)
                    params[2].clamp_(-1, 1)
        with torch.no_grad():
            final = binaryconnect_loss(X, y, *params)
        return [*(p.detach().clone() for p in params), final]

    return Case(run, reset=reset)
