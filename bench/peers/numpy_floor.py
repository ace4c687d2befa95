"""The floor: each workload's gradient derived by hand and written directly in numpy.

Straightforward numpy, as a person would write it: no graph, no buffer reuse,
no fused kernels; only what the chain rule gives, simplified as by hand.
"""
from __future__ import annotations

import sys

import numpy as np

from bench.measure import run_child
from bench.peers import Case

VERSION = np.__version__


def w1(d, variant=None) -> Case:
    x, n = d["x"], d["n"]

    def run():
        ys = []
        y = x
        for _ in range(n):
            y = np.tanh(y * 1.0001 + 0.1)
            ys.append(y)
        g = np.float64(1.0)
        for y in reversed(ys):  # d tanh(u)/du = 1 - tanh(u)^2, du/dy = 1.0001
            g = g * (1 - y * y) * 1.0001
        return ys[-1], g

    return Case(run)


def w2(d, variant=None) -> Case:
    x, w = d["x"], d["w"]

    def run():
        s = np.sign(x)
        y = np.sum(s * w + 0.5 * x * x)
        gx = np.where(np.abs(x) <= 1, w, 0.0) + x  # sign's straight-through (hard-tanh) gradient
        return y, gx, s

    return Case(run)


def mlp(X, labels, W1, b1, W2, with_dx: bool = True):
    """Loss and gradients of mean softmax cross-entropy of tanh(X @ W1 + b1) @ W2."""
    n = X.shape[0]
    H = np.tanh(X @ W1 + b1)
    logits = H @ W2
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    onehot = np.eye(W2.shape[1], dtype=X.dtype)[labels]
    loss = -np.sum(onehot * logp) / n
    dlogits = (np.exp(logp) - onehot) / n
    gW2 = H.T @ dlogits
    dZ = (dlogits @ W2.T) * (1 - H * H)
    gb1 = dZ.sum(axis=0)
    gW1 = X.T @ dZ
    gX = dZ @ W1.T if with_dx else None
    return loss, gX, gW1, gb1, gW2


def w3(d, variant=None) -> Case:
    args = (d["X"], d["labels"], d["W1"], d["b1"], d["W2"])
    return Case(lambda: mlp(*args))


def w4(d, variant=None) -> Case:
    x, n = d["x"], d["n"]

    def run():
        y = x
        for _ in range(n):
            y = y * 0.999 + 0.001
        g = np.ones_like(x)
        for _ in range(n):  # affine: the backward needs nothing from the forward
            g = g * 0.999
        return np.sum(y), g

    return Case(run)


def w5(d, variant=None) -> Case:
    X, labels, steps, lr, clip = d["X"], d["labels"], d["steps"], d["lr"], d["clip"]

    def run():
        W1, b1, W2 = d["W1"], d["b1"], d["W2"]
        for _ in range(steps):
            _, _, gW1, gb1, gW2 = mlp(X, labels, W1, b1, W2, with_dx=False)
            norm = np.sqrt(np.sum(gW1 * gW1) + np.sum(gb1 * gb1) + np.sum(gW2 * gW2))
            scale = clip / max(norm, clip)
            W1 = W1 - lr * (gW1 * scale)
            b1 = b1 - lr * (gb1 * scale)
            W2 = W2 - lr * (gW2 * scale)
        return W1, b1, W2

    return Case(run)


def w6(d, variant=None) -> Case:
    """The start-up floor for a CLI: a Python process that imports numpy and exits."""
    last = {}

    def run():
        last["seconds"], last["maxrss_mb"] = run_child([sys.executable, "-c", "import numpy"])
        return ()

    return Case(run, to_numpy=lambda out: [], child_peak_mb=lambda: last["maxrss_mb"])


def binaryconnect(X, labels, W1, b1, W2, b2, grads: bool = True):
    """Loss (and gradients) of BinaryConnect's 64-32-10 MLP: sign(W) forward, hard-tanh STE back."""
    n = X.shape[0]
    s1, s2 = np.sign(W1), np.sign(W2)
    a1 = X @ s1 * 0.125 + b1
    h = np.maximum(a1, 0.0)
    logits = h @ s2 * 0.25 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    onehot = np.eye(10)[labels]
    loss = -np.sum(onehot * (shifted - np.log(total))) / n
    if not grads:
        return loss
    dlogits = (e / total - onehot) / n
    gb2 = dlogits.sum(axis=0)
    gW2 = np.where(np.abs(W2) <= 1, h.T @ dlogits * 0.25, 0.0)  # sign's hard-tanh straight-through
    da1 = np.where(a1 > 0, dlogits @ s2.T * 0.25, 0.0)
    gb1 = da1.sum(axis=0)
    gW1 = np.where(np.abs(W1) <= 1, X.T @ da1 * 0.125, 0.0)
    return loss, (gW1, gb1, gW2, gb2)


def w7(d, variant=None) -> Case:
    """The training loop as a person writes it: spec-v2's split and standardization of the
    loaded data (gradcli's train() does them on every run), its batches, RMSProp as tf.train,
    clip."""
    from bench.workloads import epoch_order, training_part

    batch, seed = d["batch"], d["seed"]
    lr, rho, eps = (float(np.float32(v)) for v in (d["lr"], 0.9, 1e-10))  # tf.train's float32 constants

    def run():
        X, y = training_part(d["x"], d["y"], seed)
        params = [d["W1"].copy(), d["b1"].copy(), d["W2"].copy(), d["b2"].copy()]
        ms = [np.ones_like(p) for p in params]  # RMSProp's mean square starts at ones
        for epoch in range(d["epochs"]):
            order = epoch_order(len(y), seed, epoch)
            for i in range(0, len(y), batch):
                rows = order[i:i + batch]
                _, grads = binaryconnect(X[rows], y[rows], *params)
                for p, m, g in zip(params, ms, grads, strict=True):
                    m += (g * g - m) * (1 - rho)
                    p -= lr * g / np.sqrt(m + eps)
                np.clip(params[0], -1, 1, out=params[0])
                np.clip(params[2], -1, 1, out=params[2])
        return (*params, binaryconnect(X, y, *params, grads=False))

    return Case(run)
