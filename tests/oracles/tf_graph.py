"""A spec's computation written directly in TensorFlow 1 style, the seeds' framework.

Graph mode, float64: tf.RegisterGradient + gradient_override_map for `register` and
`override_map`, tf.custom_gradient for `functions`, tf.compat.v1.gradients with stop_gradients
and grad_ys, and tf.compat.v1.train optimizers with tf.clip_by_* for `train`. Nothing here
reads gradcli: a test states its case once as a spec and once as a `build` function here.
"""
from __future__ import annotations

import contextlib
import itertools

import numpy as np
from oracle_helpers import tensorflow

tf = tensorflow()
f64 = tf.float64
_names = itertools.count()


def register(fn) -> str:
    """Register fn(op, *dys) under a fresh name (TensorFlow's registry is global) and return it."""
    name = f"OracleGradient{next(_names)}"
    tf.RegisterGradient(name)(fn)
    return name


HARDTANH = register(lambda op, dy: [tf.where(tf.abs(op.inputs[0]) <= 1, dy, tf.zeros_like(dy))]
                    + [None] * (len(op.inputs) - 1))
IDENTITY = register(lambda op, dy: [dy] + [None] * (len(op.inputs) - 1))
ZERO = register(lambda op, dy: [tf.zeros_like(op.inputs[0])] + [None] * (len(op.inputs) - 1))


class Style:
    """Gradient control as the overridden build uses it; the true build leaves it all out
    (plain forward functions), as spec-v1 defines the true gradient."""

    def __init__(self, graph, overridden: bool) -> None:
        self.graph, self.overridden = graph, overridden

    def override(self, mapping: dict):
        return self.graph.gradient_override_map(mapping) if self.overridden else contextlib.nullcontext()

    def custom(self, forward, backward):
        """forward(*xs) with gradient backward(xs, dy) -> one gradient (or None) per input."""
        if not self.overridden:
            return forward

        @tf.custom_gradient
        def op(*xs):
            return forward(*xs), lambda dy: backward(xs, dy)
        return op

    def stop_gradient(self, x):
        return tf.stop_gradient(x) if self.overridden else tf.identity(x)

    def pass_through(self, fn, x):
        return tf.grad_pass_through(fn)(x) if self.overridden else fn(x)

    def reverse_gradient(self, x, scale: float):
        return self.custom(tf.identity, lambda xs, dy: [-scale * dy])(x)


def optimizer(name: str, **hyper):
    """The tf.compat.v1.train optimizer the spec's train.optimizer names.

    Hyper-parameters go in as the Python floats the spec states: tf.compat.v1.train rounds them
    (and keeps Adam's beta powers) in float32, and gradcli trains to those numbers."""
    train = tf.compat.v1.train
    if name == "sgd":
        return train.GradientDescentOptimizer(hyper["lr"])
    if name == "momentum":
        return train.MomentumOptimizer(hyper["lr"], hyper["momentum"],
                                       use_nesterov=hyper.get("nesterov", False))
    return train.AdamOptimizer(hyper["lr"], **{k: v for k, v in hyper.items() if k != "lr"})


def clipped(grads: list, clip: dict | None) -> list:
    if clip is None:
        return grads
    kind, value = next(iter(clip.items()))
    if kind == "norm":
        return [None if g is None else tf.clip_by_norm(g, value) for g in grads]
    if kind == "global_norm":
        return tf.clip_by_global_norm(grads, value)[0]
    return [None if g is None else tf.clip_by_value(g, *value) for g in grads]


def run(case, overridden: bool) -> dict:
    """values, gradients {output: {wrt: array or None}} and (overridden) training, by TensorFlow."""
    graph = tf.Graph()
    with graph.as_default():
        variables = {n: tf.compat.v1.Variable(v, dtype=f64, name=n) for n, v in case.inputs.items()
                     if n not in case.frozen}
        leaves = {n: tf.convert_to_tensor(variables[n]) if n in variables else tf.constant(v, f64)
                  for n, v in case.inputs.items()}
        env = {**leaves, **case.build(Style(graph, overridden), dict(leaves))}
        grads = {}
        for out in case.outputs:
            gy = case.grad_ys.get(out)
            row = tf.compat.v1.gradients([env[out]], [env[n] for n in case.wrt],
                                         grad_ys=None if gy is None else [tf.constant(gy, f64)],
                                         stop_gradients=[env[n] for n in case.stop])
            grads[out] = dict(zip(case.wrt, row))
        step, step_grads = _train_op(case, env, variables) if overridden and case.train else (None, {})
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            result = {"values": session.run({n: env[n] for n in env if n not in case.inputs}),
                      "gradients": {o: {n: None if g is None else session.run(g) for n, g in row.items()}
                                    for o, row in grads.items()}}
            if step is not None:
                loss = env[case.train["loss"]]
                result["loss"], result["step_gradients"] = [], []
                for _ in range(case.train["steps"]):
                    result["loss"].append(session.run(loss))
                    result["step_gradients"].append(session.run(step_grads))
                    session.run(step)
                result["params"] = session.run(variables)
                result["final_loss"] = session.run(loss)
    return result


def _train_op(case, env, variables):
    spec = case.train
    opt = optimizer(**spec["optimizer"])
    pairs = opt.compute_gradients(env[spec["loss"]], var_list=list(variables.values()))
    grads = clipped([g for g, _ in pairs], spec.get("clip"))
    live = [(g, v) for g, (_, v) in zip(grads, pairs) if g is not None]
    names = {v.ref(): n for n, v in variables.items()}
    return opt.apply_gradients(live), {names[v.ref()]: g for g, v in live}


def as_arrays(inputs: dict) -> dict:
    return {n: np.asarray(v, dtype=np.float64) for n, v in inputs.items()}
