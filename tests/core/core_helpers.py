"""Shared checks for the core's tests: finite differences by replay, value comparison."""
from __future__ import annotations

import numpy as np

import gradcli as gc


def fd_gradients(ys, xs, weights=None, eps=1e-6):
    """Central differences of sum_k sum(weights_k * ys_k) with respect to each x.

    Independent of gc.numeric_gradients: it only feeds perturbed values to
    gc.evaluate, so the reference shares nothing with the backward walk.
    """
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    weights = [1.0] * len(ys) if weights is None else list(weights)

    def objective(x, value):
        outs = gc.evaluate(ys, feed={x: value})
        return sum(float(np.sum(np.asarray(w) * np.asarray(o, dtype=np.float64)))
                   for w, o in zip(weights, outs, strict=True))

    grads = []
    for x in xs:
        base = np.array(x.numpy(), dtype=np.float64)
        flat = base.reshape(-1)
        grad = np.zeros(flat.shape)
        for i in range(flat.size):
            h = eps * max(1.0, abs(flat[i]))
            up, down = flat.copy(), flat.copy()
            up[i] += h
            down[i] -= h
            grad[i] = (objective(x, up.reshape(base.shape))
                       - objective(x, down.reshape(base.shape))) / (2 * h)
        grads.append(grad.reshape(base.shape))
    return grads


def values(tensors, shapes=None):
    """Evaluate gradient tensors, None as zeros of the matching shape when shapes is given."""
    out = []
    for i, t in enumerate(tensors):
        if t is None:
            out.append(None if shapes is None else np.zeros(shapes[i]))
        else:
            out.append(np.asarray(gc.evaluate(t), dtype=np.float64))
    return out


def assert_close(actual, expected, rtol=1e-6, atol=1e-8, what=""):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64),
                               np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol, err_msg=what)


def check_gradients(y, xs, rng, rtol=1e-5, atol=1e-7):
    """gc.gradients of y (weighted by random grad_ys) against central differences, per x."""
    weights = rng.uniform(0.5, 1.5, y.shape) * rng.choice([-1.0, 1.0], y.shape)
    analytic = gc.gradients(y, xs, grad_ys=[weights], unconnected_gradients="zero")
    numeric = fd_gradients(y, xs, [weights])
    for i, (a, n) in enumerate(zip(analytic, numeric, strict=True)):
        assert a.shape == xs[i].shape, f"gradient {i} has shape {a.shape}, input {xs[i].shape}"
        assert_close(gc.evaluate(a), n, rtol=rtol, atol=atol, what=f"gradient for input {i}")
    return analytic


def uids_used(fn):
    """How many op/tensor uids fn() creates (the counter is shared by ops and tensors)."""
    from gradcli.core import graph
    before = next(graph._uids)
    fn()
    return next(graph._uids) - before - 1
