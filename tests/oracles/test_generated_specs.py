"""Generated specs with register, override_map (global and scoped), functions with custom
gradients, stop_gradients, grad_ys and train, on every backend: no error of any kind, values
as numpy computes them, overridden and true gradients as TensorFlow's tape computes them (each
override and function written with tf.custom_gradient here), and training as a hand-written
SGD or momentum loop over TensorFlow's overridden gradients.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from available import backend_params
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from oracle_helpers import check, literal, mismatch, run_spec, tensorflow

from gradcli.errors import GradcliError

tf = tensorflow()
# GRADCLI_ORACLE_EXAMPLES=500 runs a longer campaign; the default keeps the suite quick.
# No shrinking: a failure prints its whole spec, and shrinking a slow backend's failure takes a minute.
SETTINGS = settings(max_examples=int(os.environ.get("GRADCLI_ORACLE_EXAMPLES", "15")), deadline=None,
                    derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SHAPES = {"x": (3,), "y": (2, 3), "s": ()}

# gradient name -> (spec expression, TF gradient of (op input x, op output y, dy))
REGISTERED = {
    "Scale": ("dy * 0.5", lambda x, y, dy: dy * 0.5),
    "Gate": ("where(abs(x) <= 1, dy, zeros_like(dy))",
             lambda x, y, dy: tf.where(tf.abs(x) <= 1, dy, 0 * dy)),
    "Flip": ("-dy", lambda x, y, dy: -dy),
    "Soft": ("dy * (1 - square(tanh(x)))", lambda x, y, dy: dy * (1 - tf.square(tf.tanh(x)))),
    "ByOutput": ("dy * y", lambda x, y, dy: dy * y),
}
BUILTIN = {"identity": lambda x, y, dy: dy, "reverse": lambda x, y, dy: -dy,
           "zero": lambda x, y, dy: tf.zeros_like(x),
           "hardtanh": lambda x, y, dy: tf.where(tf.abs(x) <= 1, dy, tf.zeros_like(dy))}


def tf_round(x):
    """tf.round with the gradient gradcli documents, zero (TensorFlow registers None for Round)."""
    return tf.round(x) + 0 * x


# op -> (numpy, TensorFlow); the first six are what override_map entries target
UNARY = {"sign": (np.sign, tf.sign), "round": (np.round, tf_round), "tanh": (np.tanh, tf.tanh),
         "identity": (lambda v: v, tf.identity),
         "sigmoid": (lambda v: np.exp(-np.logaddexp(0, -v)), tf.sigmoid),
         "square": (np.square, tf.square), "sin": (np.sin, tf.sin),
         "softplus": (lambda v: np.logaddexp(0, v), tf.nn.softplus)}
OVERRIDABLE = ("sign", "round", "tanh", "identity", "sigmoid", "square")
# name -> (args, forward, gradients, numpy forward, TF forward, TF gradients of (xs, dy))
FUNCTIONS = {
    "swish": (["u"], "u * sigmoid(u)", ["dy * sigmoid(u)"], lambda u: u / (1 + np.exp(-u)),
              lambda u: u * tf.sigmoid(u), lambda xs, dy: [dy * tf.sigmoid(xs[0])]),
    "snap": (["u"], "round(u * 2) / 2", ["dy"], lambda u: np.round(u * 2) / 2,
             lambda u: tf_round(u * 2) / 2, lambda xs, dy: [dy]),
    "wiggle": (["u"], "sin(u) + u", ["dy * cos(u) * 2"], lambda u: np.sin(u) + u,
               lambda u: tf.sin(u) + u, lambda xs, dy: [dy * tf.cos(xs[0]) * 2]),
    "gate2": (["u", "v"], "u * tanh(v)", ["dy * tanh(v)", "none"], lambda u, v: u * np.tanh(v),
              lambda u, v: u * tf.tanh(v), lambda xs, dy: [dy * tf.tanh(xs[1]), None]),
}


class Node:
    """One generated expression: its spec text, shape, numpy forward and TF forward."""

    def __init__(self, text, shape, np_fn, tf_fn):
        self.text, self.shape, self.np_fn, self.tf_fn = text, shape, np_fn, tf_fn


class Context:
    """The TF side of one let: which ops are overridden there (None: the true build)."""

    def __init__(self, overrides: dict | None):
        self.overrides = overrides

    def custom(self, forward, backward, *xs):
        if self.overrides is None:
            return forward(*xs)

        @tf.custom_gradient
        def op(*args):
            out = forward(*args)
            return out, lambda dy: backward(args, out, dy)
        return op(*xs)


def unary(op, child):
    np_op, tf_op = UNARY[op]

    def tf_fn(env, ctx):
        x = child.tf_fn(env, ctx)
        grad = (ctx.overrides or {}).get(op)
        if grad is None:
            return tf_op(x)
        return ctx.custom(tf_op, lambda xs, y, dy: grad(xs[0], y, dy), x)
    return Node(f"{op}({child.text})", child.shape, lambda env: np_op(child.np_fn(env)), tf_fn)


def control(kind, child):
    """stop_gradient(e) or reverse_gradient(e, scale=0.5): identities in the true build."""
    def tf_fn(env, ctx):
        x = child.tf_fn(env, ctx)
        if ctx.overrides is None:
            return tf.identity(x)
        if kind == "stop_gradient":
            return tf.stop_gradient(x)
        return ctx.custom(tf.identity, lambda xs, y, dy: [-0.5 * dy], x)
    text = (f"stop_gradient({child.text})" if kind == "stop_gradient"
            else f"reverse_gradient({child.text}, scale=0.5)")
    return Node(text, child.shape, child.np_fn, tf_fn)


def call(name, *children):
    _, _, _, np_fwd, tf_fwd, tf_grads = FUNCTIONS[name]

    def tf_fn(env, ctx):
        xs = [c.tf_fn(env, ctx) for c in children]
        return ctx.custom(tf_fwd, lambda args, y, dy: tf_grads(args, dy), *xs)
    return Node(f"{name}({', '.join(c.text for c in children)})", children[0].shape,
                lambda env: np_fwd(*(c.np_fn(env) for c in children)), tf_fn)


def binary(symbol, left, right):
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[symbol]
    tf_op = {"+": tf.add, "-": tf.subtract, "*": tf.multiply}[symbol]
    return Node(f"({left.text} {symbol} {right.text})", np.broadcast_shapes(left.shape, right.shape),
                lambda env: fn(left.np_fn(env), right.np_fn(env)),
                lambda env, ctx: tf_op(left.tf_fn(env, ctx), right.tf_fn(env, ctx)))


def leaf(name, shape):
    return Node(name, shape, lambda env: env[name], lambda env, ctx: env[name])


@st.composite
def expressions(draw, names: dict, depth: int):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(sorted(names)))
        return leaf(name, names[name])
    kind = draw(st.sampled_from(["unary", "unary", "function", "binary", "binary", "sum", "control"]))
    child = draw(expressions(names, depth - 1))
    if kind == "unary":
        return unary(draw(st.sampled_from(sorted(UNARY))), child)
    if kind == "control":
        return control(draw(st.sampled_from(["stop_gradient", "reverse_gradient"])), child)
    if kind == "function":
        name = draw(st.sampled_from(sorted(FUNCTIONS)))
        if len(FUNCTIONS[name][0]) == 1:
            return call(name, child)
        return call(name, child, binary("*", child, leaf("s", ())))  # v has u's shape
    if kind == "sum" and len(child.shape) == 2:
        return Node(f"sum({child.text}, axis=0)", (3,), lambda env: np.sum(child.np_fn(env), axis=0),
                    lambda env, ctx: tf.reduce_sum(child.tf_fn(env, ctx), axis=0))
    return binary(draw(st.sampled_from("+-*")), child, draw(expressions(names, depth - 1)))


@st.composite
def cases(draw):
    """A spec's text and everything the oracle needs to compute the same thing."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    inputs = {n: rng.uniform(-2, 2, shape) for n, shape in SHAPES.items()}
    registered = draw(st.lists(st.sampled_from(sorted(REGISTERED)), min_size=1, max_size=2, unique=True))
    names, lets = dict(SHAPES), []
    for i in range(draw(st.integers(1, 3))):
        node = draw(expressions(names, 3))
        lets.append((f"l{i}", node))
        names[f"l{i}"] = node.shape
    loss = draw(expressions(names, 2))
    vec = draw(expressions(names, 2))
    outputs = [("loss", Node(f"sum({loss.text})", (), lambda env: np.sum(loss.np_fn(env)),
                             lambda env, ctx: tf.reduce_sum(loss.tf_fn(env, ctx)))), ("vec", vec)]
    gradient_names = registered * 3 + sorted(BUILTIN)  # mostly the registered ones
    texts = " ".join(node.text for _, node in lets + outputs)
    present = [op for op in OVERRIDABLE if f"{op}(" in texts] or list(OVERRIDABLE)
    entries = []
    for _ in range(draw(st.integers(1, 3))):
        scope = draw(st.one_of(st.none(), st.lists(st.sampled_from([n for n, _ in lets + outputs]),
                                                   min_size=1, max_size=2, unique=True)))
        op = draw(st.sampled_from(present))
        if any(o == op and (s is None if scope is None else set(scope) & set(s or ()))
               for o, _, s in entries):
            continue  # an op overridden twice globally, or twice for one name, is an error
        entries.append((op, draw(st.sampled_from(gradient_names)), scope))
    # (tf.stop_gradient on a let that is just an input would also stop the input's own gradient,
    # which stop_gradients does not: tf.gradients still differentiates a source it stops at)
    stop = draw(st.sampled_from([[], ["l0"]])) if lets[0][1].text not in SHAPES else []
    grad_ys = {"vec": rng.normal(size=vec.shape)}
    if draw(st.booleans()):
        grad_ys["loss"] = float(rng.normal())
    train = {"optimizer": draw(st.sampled_from(["sgd", "momentum", "adam"])), "lr": 0.1, "steps": 2,
             "clip": draw(st.sampled_from([None, ("norm", 0.8), ("global_norm", 1.2),
                                           ("value", (-0.3, 0.5))]))}
    return {"inputs": inputs, "registered": registered, "lets": lets, "outputs": outputs,
            "entries": entries, "stop": stop, "grad_ys": grad_ys, "train": train}


def spec_text(case, train: bool) -> str:
    lines = ["inputs:", *(f"  {n}: {literal(v)}" for n, v in case["inputs"].items()), "register:"]
    lines += [f"  {n}: {REGISTERED[n][0]!r}".replace("'", '"') for n in case["registered"]]
    lines.append("override_map:")
    for op, gradient, scope in case["entries"]:
        lines.append(f"  - {{op: {op}, gradient: {gradient}"
                     + (f", scope: [{', '.join(scope)}]}}" if scope else "}"))
    lines.append("functions:")
    for name, (args, forward, grads, *_) in FUNCTIONS.items():
        lines += [f"  {name}:", f"    args: [{', '.join(args)}]", f'    forward: "{forward}"',
                  f"    gradient: [{', '.join(grads if grads[-1] == 'none' else map(repr, grads))}]"
                  .replace("'", '"')]
    lines += ["let:", *(f'  {n}: "{node.text}"' for n, node in case["lets"])]
    lines += ["outputs:", *(f'  {n}: "{node.text}"' for n, node in case["outputs"])]
    lines.append("wrt: [x, y, s]")
    if case["stop"]:
        lines.append(f"stop_gradients: [{', '.join(case['stop'])}]")
    lines += ["grad_ys:", *(f"  {n}: {literal(v)}" for n, v in case["grad_ys"].items())]
    if train:
        t = case["train"]
        lines += ["train:", "  loss: loss", f"  optimizer: {{name: {t['optimizer']}, lr: {t['lr']}}}",
                  f"  steps: {t['steps']}"]
        if t["clip"]:
            kind, value = t["clip"]
            lines.append(f"  clip: {{{kind}: {literal(value)}}}")
    return "\n".join(lines) + "\n"


# ----- the oracle: numpy forward, TensorFlow's tape through tf.custom_gradient -----
def numpy_values(case) -> dict:
    env = dict(case["inputs"])
    for name, node in case["lets"] + case["outputs"]:
        env[name] = node.np_fn(env)
    return {n: env[n] for n, _ in case["lets"] + case["outputs"]}


def overrides_for(case, name: str, overridden: bool) -> dict | None:
    """The ops overridden while `name` is built: global entries, then scoped ones (inner wins)."""
    if not overridden:
        return None
    table = {**BUILTIN, **{n: REGISTERED[n][1] for n in case["registered"]}}
    found = {op: table[g] for op, g, scope in case["entries"] if scope is None}
    found.update({op: table[g] for op, g, scope in case["entries"] if scope and name in scope})
    return found


def tf_gradients(case, params: dict, overridden: bool, stop: bool, unconnected="zero") -> dict:
    """{output: {input: gradient}} with the spec's grad_ys; stop says whether stop_gradients holds."""
    leaves = {n: tf.constant(v) for n, v in params.items()}
    result = {}
    for out, _ in case["outputs"]:
        with tf.GradientTape() as tape:
            tape.watch(list(leaves.values()))
            env = dict(leaves)
            for name, node in case["lets"] + case["outputs"]:
                env[name] = node.tf_fn(env, Context(overrides_for(case, name, overridden)))
                if stop and name in case["stop"]:
                    env[name] = tf.stop_gradient(env[name])
        dy = case["grad_ys"].get(out) if stop else None
        grads = tape.gradient(env[out], list(leaves.values()),
                              output_gradients=None if dy is None else tf.constant(dy, tf.float64),
                              unconnected_gradients=tf.UnconnectedGradients(unconnected))
        result[out] = {n: None if g is None else g.numpy() for n, g in zip(leaves, grads)}
    return result


def numpy_loss(case, params) -> float:
    return float(numpy_values({**case, "inputs": params})["loss"])


def clipped(grads: dict, clip) -> dict:
    """tf.clip_by_norm per tensor, tf.clip_by_global_norm, tf.clip_by_value: their formulas."""
    if clip is None:
        return grads
    kind, c = clip
    if kind == "value":
        return {n: np.clip(g, *c) for n, g in grads.items()}
    if kind == "norm":
        return {n: g * c / max(np.sqrt(np.sum(g * g)), c) for n, g in grads.items()}
    total = np.sqrt(sum(np.sum(g * g) for g in grads.values()))
    return {n: g * c / max(total, c) for n, g in grads.items()}


def trained(case) -> tuple[list, dict] | None:
    """Losses before each step and the final parameters: tf.train's update rules, by hand,
    over TensorFlow's overridden gradients of the loss; None when no gradient reaches the
    parameters (tf.train's minimize refuses: "No gradients provided for any variable")."""
    params, losses, t = dict(case["inputs"]), [], case["train"]
    reaching = tf_gradients(case, params, overridden=True, stop=False, unconnected="none")["loss"]
    if all(g is None for g in reaching.values()):
        return None
    slots = {n: {"accum": 0.0, "m": 0.0, "v": 0.0} for n in params}
    # tf.train rounds Python-float hyper-parameters through float32, in the kernels' order below
    lr, mu, b1, b2, eps = (float(np.float32(v)) for v in (t["lr"], 0.9, 0.9, 0.999, 1e-8))
    b1_power, b2_power = np.float32(0.9), np.float32(0.999)  # AdamOptimizer's float32 powers
    for _ in range(t["steps"]):
        losses.append(numpy_loss(case, params))
        grads = clipped(tf_gradients(case, params, overridden=True, stop=False)["loss"], t["clip"])
        for n, g in grads.items():
            slot = slots[n]
            if t["optimizer"] == "sgd":
                params[n] = params[n] - g * lr
            elif t["optimizer"] == "momentum":
                slot["accum"] = slot["accum"] * mu + g
                params[n] = params[n] - slot["accum"] * lr
            else:  # tf.train.AdamOptimizer: bias correction in the step size, epsilon outside sqrt
                slot["m"] = slot["m"] + (g - slot["m"]) * (1 - b1)
                slot["v"] = slot["v"] + (g * g - slot["v"]) * (1 - b2)
                lr_t = lr * np.sqrt(1 - float(b2_power)) / (1 - float(b1_power))
                params[n] = params[n] - slot["m"] * lr_t / (np.sqrt(slot["v"]) + eps)
        b1_power, b2_power = b1_power * np.float32(0.9), b2_power * np.float32(0.999)
    return losses, params


@pytest.mark.parametrize("backend", backend_params())
@SETTINGS
@given(case=cases())
def test_generated_specs_values_and_gradients(backend, case):
    result = run_spec(spec_text(case, train=False), backend)
    failures = []
    for name, value in numpy_values(case).items():
        failures += mismatch(f"value of {name}", result.values[name], value)
    for kind, overridden in (("overridden", True), ("true", False)):
        for out, row in tf_gradients(case, case["inputs"], overridden, stop=True).items():
            for n, expected in row.items():
                got = getattr(result.gradients[out][n], kind)
                failures += mismatch(f"{kind} d{out}/d{n}", 0 * expected if got is None else got, expected)
    check(failures and [spec_text(case, train=False), *failures])


@pytest.mark.parametrize("backend", backend_params())
@SETTINGS
@given(case=cases())
def test_generated_specs_train_as_tf_train(backend, case):
    expected = trained(case)
    if expected is None:
        try:
            run_spec(spec_text(case, train=True), backend)
        except GradcliError as exc:
            assert "no gradients provided for any variable" in str(exc)
            return
        pytest.fail("TensorFlow finds no gradient of the loss for any parameter (tf.train refuses), "
                    "but gradcli trained:\n" + spec_text(case, train=True))
    train = run_spec(spec_text(case, train=True), backend).train
    losses, params = expected
    failures = mismatch("train.loss", train.loss, losses)
    for n, value in params.items():
        failures += mismatch(f"train.params.{n}", train.final[n], value)
    check(failures and [spec_text(case, train=True), *failures])
