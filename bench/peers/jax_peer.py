"""jax in float64: eager (op by op, no jit) or jit (compiled ahead: lower().compile() is the build).

Loops are plain Python loops, unrolled under jit as a user's code would be.
"""
from __future__ import annotations

import os

if os.environ.get("BENCH_THREADS") == "1" and hasattr(os, "sched_setaffinity"):
    # XLA's CPU runtime ignores every thread setting: one CPU is the only way to one thread.
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from bench.peers import Case, NotApplicable  # noqa: E402

jax.config.update("jax_enable_x64", True)
VERSION = jax.__version__


def _case(fn, args, variant) -> Case:
    if variant == "jit":
        fn = jax.jit(fn).lower(*args).compile()
    return Case(lambda: jax.block_until_ready(fn(*args)))


@jax.custom_vjp
def sign_ste(x):
    return jnp.sign(x)


sign_ste.defvjp(lambda x: (jnp.sign(x), x),
                lambda x, g: (jnp.where(jnp.abs(x) <= 1, g, 0.0),))


def w1(d, variant) -> Case:
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = jnp.tanh(y * 1.0001 + 0.1)
        return y

    return _case(jax.value_and_grad(f), (jnp.asarray(d["x"]),), variant)


def w2(d, variant) -> Case:
    f = lambda x, w: jnp.sum(sign_ste(x) * w + 0.5 * x * x)  # noqa: E731
    return _case(jax.value_and_grad(f, argnums=(0, 1)), (jnp.asarray(d["x"]), jnp.asarray(d["w"])), variant)


def mlp_loss(X, W1, b1, W2, labels):
    logp = jax.nn.log_softmax(jnp.tanh(X @ W1 + b1) @ W2)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def w3(d, variant) -> Case:
    args = tuple(jnp.asarray(d[k]) for k in ("X", "W1", "b1", "W2", "labels"))
    return _case(jax.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)), args, variant)


def w4(d, variant) -> Case:
    if variant == "jit":
        raise NotApplicable("jit folds an affine chain's gradient into a constant "
                            "(and compiling 200,000 unrolled ops is not a real use)")
    n = d["n"]

    def f(x):
        y = x
        for _ in range(n):
            y = y * 0.999 + 0.001
        return jnp.sum(y)

    return _case(jax.value_and_grad(f), (jnp.asarray(d["x"]),), variant)


def w5(d, variant) -> Case:
    """A step function (jitted under jit) called once per step from a Python loop."""
    lr, clip = d["lr"], d["clip"]
    X, labels = jnp.asarray(d["X"]), jnp.asarray(d["labels"])
    params = tuple(jnp.asarray(d[k]) for k in ("W1", "b1", "W2"))

    def step(params, X, labels):
        grads = jax.grad(lambda p: mlp_loss(X, *p, labels))(params)
        norm = jnp.sqrt(sum(jnp.sum(g * g) for g in grads))
        scale = clip / jnp.maximum(norm, clip)
        return tuple(p - lr * (g * scale) for p, g in zip(params, grads, strict=True))

    if variant == "jit":
        step = jax.jit(step).lower(params, X, labels).compile()

    def run():
        p = params
        for _ in range(d["steps"]):
            p = step(p, X, labels)
        return jax.block_until_ready(p)

    return Case(run)
