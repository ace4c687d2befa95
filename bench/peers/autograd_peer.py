"""HIPS autograd: traces every call (no graph is kept between runs); custom gradient by defvjp."""
from __future__ import annotations

from importlib.metadata import version

import autograd.numpy as anp
import numpy as np
from autograd import grad, value_and_grad
from autograd.extend import defvjp, primitive

from bench.peers import Case

VERSION = version("autograd")


@primitive
def sign_ste(x):
    return np.sign(x)


defvjp(sign_ste, lambda ans, x: lambda g: np.where(np.abs(x) <= 1, g, 0.0))


def w1(d, variant=None) -> Case:
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = anp.tanh(y * 1.0001 + 0.1)
        return y

    vg, x = value_and_grad(f), d["x"]
    return Case(lambda: vg(x))


def w2(d, variant=None) -> Case:
    vg, args = value_and_grad(lambda a: anp.sum(sign_ste(a[0]) * a[1] + 0.5 * a[0] * a[0])), (d["x"], d["w"])
    return Case(lambda: vg(args))


def mlp_loss(X, W1, b1, W2, labels):
    logits = anp.dot(anp.tanh(anp.dot(X, W1) + b1), W2)
    shifted = logits - anp.max(logits, axis=1, keepdims=True)
    logp = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
    return -anp.mean(logp[anp.arange(X.shape[0]), labels])


def w3(d, variant=None) -> Case:
    labels = d["labels"]
    vg = value_and_grad(lambda p: mlp_loss(*p, labels))
    params = (d["X"], d["W1"], d["b1"], d["W2"])
    return Case(lambda: vg(params))


def w4(d, variant=None) -> Case:
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = y * 0.999 + 0.001
        return anp.sum(y)

    vg, x = value_and_grad(f), d["x"]
    return Case(lambda: vg(x))


def w5(d, variant=None) -> Case:
    X, labels, steps, lr, clip = d["X"], d["labels"], d["steps"], d["lr"], d["clip"]
    g = grad(lambda p: mlp_loss(X, *p, labels))

    def run():
        params = (d["W1"], d["b1"], d["W2"])
        for _ in range(steps):
            grads = g(params)
            norm = np.sqrt(sum(np.sum(t * t) for t in grads))
            scale = clip / max(norm, clip)
            params = tuple(p - lr * (t * scale) for p, t in zip(params, grads, strict=True))
        return params

    return Case(run)
