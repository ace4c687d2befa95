"""The spec features in combination, each case written once as a spec and once directly in
TensorFlow (tf_graph.py: RegisterGradient, gradient_override_map, custom_gradient,
tf.gradients(stop_gradients, grad_ys), tf.compat.v1.train, tf.clip_by_*), compared in float64
on every backend: values, overridden and true gradients, and every training step.
"""
from __future__ import annotations

import pytest
import tf_graph
from available import backend_params
from oracle_helpers import check, literal, mismatch, run_spec
from tf_graph import HARDTANH, IDENTITY, ZERO, register, tf

from gradcli.record import record


@record
class Case:
    """One spec (its inputs are written from `inputs`) and the same computation in TensorFlow."""

    name: str
    inputs: dict
    spec: str                  # every section but inputs
    build: object              # build(style, leaves) -> {let or output name: tensor}
    outputs: tuple
    wrt: tuple
    frozen: tuple = ()         # inputs with trainable: false
    stop: tuple = ()
    grad_ys: dict = None
    train: dict = None

    def text(self, train: bool = True) -> str:
        """The spec's YAML; without train, for the tests of values and gradients alone."""
        lines = ["inputs:"]
        for n, v in self.inputs.items():
            lines.append(f"  {n}: " + (f"{{value: {literal(v)}, trainable: false}}" if n in self.frozen
                                      else literal(v)))
        if train:
            t = self.train
            hyper = ", ".join(f"{k}: {_yaml(v)}" for k, v in t["optimizer"].items())
            clip = ", ".join(f"{k}: {_yaml(v)}" for k, v in t["clip"].items())
            block = ["train:", f"  loss: {t['loss']}", f"  optimizer: {{{hyper}}}",
                          f"  clip: {{{clip}}}", f"  steps: {t['steps']}"]
            return "\n".join(lines) + "\n" + self.spec + "\n".join(block) + "\n"
        return "\n".join(lines) + "\n" + self.spec


def _yaml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else literal(list(value) if isinstance(value, tuple) else value)


# ----- 1. register + global override_map (TensorFlow op type spelling) + momentum/nesterov + clip norm
QUANTIZE = register(lambda op, dy: tf.where(tf.abs(op.inputs[0]) <= 1, dy, tf.zeros_like(dy)))


def build_ste(t, v):
    with t.override({"Sign": QUANTIZE}):
        s = tf.sign(v["x"])
    return {"s": s, "y": tf.reduce_sum(s * v["w"]) + 0.1 * tf.reduce_sum(tf.square(v["x"] * v["w"]))}


STE = Case("register-global-override-nesterov-clip-norm",
           {"x": [-1.7, -0.6, -0.2, 0.4, 0.9, 1.3], "w": [0.5, -1.0, 2.0, 1.5, -0.3, 0.8]}, """
register:
  QuantizeGrad: where(abs(x) <= 1, dy, zeros_like(dy))
override_map:
  Sign: QuantizeGrad
let:
  s: sign(x)
outputs:
  y: sum(s * w) + 0.1 * sum(square(x * w))
""", build_ste, ("y",), ("x", "w"),
           train={"loss": "y", "steps": 3, "clip": {"norm": 1.5},
                  "optimizer": {"name": "momentum", "lr": 0.2, "momentum": 0.8, "nesterov": True}})

# ----- 2. scoped + global override, builtin hardtanh, a two-input function with a `none`-free
# custom gradient, stop_gradients, grad_ys, wrt a let, adam + clip global_norm
TWICE = register(lambda op, dy: [2 * dy])


def build_scoped(t, v):
    a, b, c, k = v["a"], v["b"], v["c"], v["k"]
    soft = t.custom(lambda u, r: u * tf.sigmoid(r),
                  lambda xs, dy: [dy * tf.sigmoid(xs[1]), tf.reduce_sum(dy * xs[0], axis=0) * 0.5])
    with t.override({"Tanh": HARDTANH}):
        g = tf.identity(a) * c
        with t.override({"Identity": TWICE}):
            h = tf.identity(tf.tanh(a * 1.5) + b)
        k2 = soft(h, b * k)
        y = tf.reduce_sum(k2 * g) + tf.reduce_sum(tf.square(b))
        z = k2[0] + b * c
    return {"g": g, "h": h, "k2": k2, "y": y, "z": z}


SCOPED = Case("scoped-override-function-stop-grad-ys-adam-global-norm",
              {"a": [[0.3, -1.2, 0.8], [1.5, -0.4, 0.1]], "b": [0.7, -0.5, 1.1], "c": 0.6,
               "k": [1.0, -2.0, 0.5]}, """
register:
  Twice: 2 * dy
override_map:
  - {op: identity, gradient: Twice, scope: [h]}
  - {op: tanh, gradient: hardtanh}
functions:
  soft:
    args: [u, r]
    forward: u * sigmoid(r)
    gradient: ["dy * sigmoid(r)", "sum(dy * u, axis=0) * 0.5"]  # quoted: YAML splits at commas
let:
  g: identity(a) * c
  h: identity(tanh(a * 1.5) + b)
  k2: soft(h, b * k)
outputs:
  y: sum(k2 * g) + sum(square(b))
  z: k2[0] + b * c
wrt: [a, b, c, h]
stop_gradients: [g]
grad_ys: {z: [0.5, -1.0, 2.0]}
""", build_scoped, ("y", "z"), ("a", "b", "c", "h"), frozen=("k",), stop=("g",),
              grad_ys={"z": [0.5, -1.0, 2.0]},
              train={"loss": "y", "steps": 4, "clip": {"global_norm": 0.9},
                     "optimizer": {"name": "adam", "lr": 0.05, "beta1": 0.8, "beta2": 0.9,
                                   "epsilon": 1e-7}})


# ----- 3. builtin override, a function with a `none` gradient, grad_pass_through,
# reverse_gradient, stop_gradient, stop_gradients, scalar and vector grad_ys, sgd + clip value
def build_gates(t, v):
    x, w, r = v["x"], v["w"], v["r"]
    gate = t.custom(lambda u, rand: tf.where(rand > 0.5, tf.sigmoid(u), tf.cast(u > 0, f64)),
                    lambda xs, dy: [dy * tf.sigmoid(xs[0]) * (1 - tf.sigmoid(xs[0])), None])
    with t.override({"Sigmoid": IDENTITY}):
        q = gate(x, r)
        p = t.pass_through(lambda z: tf.round(z * 4) / 4, w)
        e = t.reverse_gradient(tf.linalg.matvec(w, x), 0.3)
        f = t.stop_gradient(x) * x
        loss = (tf.reduce_sum(tf.square(e - 1)) + tf.reduce_sum(q * x) + tf.reduce_sum(p) * 0.5
                + tf.reduce_sum(f) + tf.reduce_sum(tf.sigmoid(w)))
        aux = e * q[0]
    return {"q": q, "p": p, "e": e, "f": f, "loss": loss, "aux": aux}


f64 = tf.float64
GATES = Case("function-none-pass-through-reverse-stop-sgd-clip-value",
             {"x": [0.8, -1.4, 2.2, -0.3], "w": [[0.5, -0.2, 0.1, 0.9], [1.2, 0.4, -0.7, 0.3]],
              "r": [0.2, 0.9, 0.6, 0.4]}, """
override_map:
  sigmoid: identity
functions:
  gate:
    args: [u, rand]
    forward: where(rand > 0.5, sigmoid(u), cast(u > 0, dtype(u)))
    gradient: [dy * sigmoid(u) * (1 - sigmoid(u)), none]
let:
  q: gate(x, r)
  p: grad_pass_through(round(w * 4) / 4, wrt=w)
  e: reverse_gradient(w @ x, scale=0.3)
  f: stop_gradient(x) * x
outputs:
  loss: sum(square(e - 1)) + sum(q * x) + sum(p) * 0.5 + sum(f) + sum(sigmoid(w))
  aux: e * q[0]
wrt: [x, w, q]
stop_gradients: [q]
grad_ys: {loss: 2.0, aux: [1.0, -3.0]}
""", build_gates, ("loss", "aux"), ("x", "w", "q"), frozen=("r",), stop=("q",),
             grad_ys={"loss": 2.0, "aux": [1.0, -3.0]},
             train={"loss": "loss", "steps": 3, "clip": {"value": (-0.5, 0.4)},
                    "optimizer": {"name": "sgd", "lr": 0.05}})


# ----- 4. two scoped builtin overrides, a trainable input the loss never sees, momentum + global norm
def build_binary_net(t, v):
    h = tf.matmul(v["data"], v["w1"]) + v["b1"]
    with t.override({"Sign": HARDTANH}):
        hq = tf.sign(h)
    logit = tf.linalg.matvec(hq, v["w2"])
    with t.override({"Relu": ZERO}):
        hsum = tf.reduce_sum(tf.nn.relu(h)) + tf.reduce_sum(v["spare"])
    loss = tf.reduce_mean(tf.nn.softplus(logit) - v["labels"] * logit)
    return {"h": h, "hq": hq, "logit": logit, "loss": loss, "hsum": hsum}


BINARY_NET = Case("scoped-builtins-unconnected-momentum-global-norm",
                  {"w1": [[0.2, -0.5], [0.7, 0.1], [-0.3, 0.4]], "b1": [0.05, -0.1], "w2": [0.6, -0.8],
                   "spare": [1.0, 2.0],
                   "data": [[1.0, -2.0, 0.5], [0.3, 0.8, -1.1], [-0.7, 0.2, 0.9], [1.5, -0.4, 0.0]],
                   "labels": [1.0, 0.0, 1.0, 0.0]}, """
override_map:
  - {op: sign, gradient: hardtanh, scope: [hq]}
  - {op: relu, gradient: zero, scope: [hsum]}
let:
  h: data @ w1 + b1
  hq: sign(h)
  logit: hq @ w2
outputs:
  loss: mean(softplus(logit) - labels * logit)
  hsum: sum(relu(h)) + sum(spare)
""", build_binary_net, ("loss", "hsum"), ("w1", "b1", "w2", "spare"), frozen=("data", "labels"),
                  train={"loss": "loss", "steps": 4, "clip": {"global_norm": 0.5},
                         "optimizer": {"name": "momentum", "lr": 0.3, "momentum": 0.9}})

# ----- 5. a registered gradient for a two-input op (list form with none), scalar grad_ys,
# adam with its defaults + clip norm
SCALED_MUL = register(lambda op, dy: [dy * op.inputs[1] * 0.5, None])


def build_scaled_mul(t, v):
    p, q = v["p"], v["q"]
    with t.override({"Mul": SCALED_MUL}):
        pq = p * q
    return {"pq": pq, "out": tf.reduce_sum(pq) + tf.reduce_sum(tf.square(p - q))}


SCALED = Case("register-two-inputs-grad-ys-adam-clip-norm",
              {"p": [1.2, -0.7, 0.4], "q": [0.5, 1.5, -2.0]}, """
register:
  ScaledMul: [dy * x1 * 0.5, none]
override_map:
  - {op: mul, gradient: ScaledMul, scope: [pq]}
let:
  pq: p * q
outputs:
  out: sum(pq) + sum(square(p - q))
grad_ys: {out: 3.0}
""", build_scaled_mul, ("out",), ("p", "q"), grad_ys={"out": 3.0},
              train={"loss": "out", "steps": 3, "clip": {"norm": 0.7},
                     "optimizer": {"name": "adam", "lr": 0.1}})

CASES = {case.name: case for case in (STE, SCOPED, GATES, BINARY_NET, SCALED)}
_references: dict = {}


def reference(case: Case) -> dict:
    """TensorFlow's overridden run (with training) and true run, computed once per case."""
    if case.name not in _references:
        grad_ys = case.grad_ys or {}
        case = Case(case.name, tf_graph.as_arrays(case.inputs), case.spec, case.build, case.outputs,
                    case.wrt, case.frozen, case.stop, grad_ys, case.train)
        _references[case.name] = {"overridden": tf_graph.run(case, True),
                                  "true": tf_graph.run(case, False)}
    return _references[case.name]


def test_every_optimizer_and_clip_is_combined():
    combos = {(c.train["optimizer"]["name"], c.train["optimizer"].get("nesterov", False),
               next(iter(c.train["clip"]))) for c in CASES.values()}
    assert {o for o, _, _ in combos} == {"sgd", "momentum", "adam"}
    assert {k for _, _, k in combos} == {"norm", "global_norm", "value"}
    assert any(n for _, n, _ in combos)


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name, backend):
    case = CASES[name]
    ref = reference(case)
    result = run_spec(case.text(train=False), backend)
    failures = []
    for n, value in ref["overridden"]["values"].items():
        failures += mismatch(f"value of {n}", result.values.get(n), value)
    for kind in ("overridden", "true"):
        for out, row in ref[kind]["gradients"].items():
            for n, expected in row.items():
                failures += mismatch(f"{kind} d{out}/d{n}", getattr(result.gradients[out][n], kind),
                                     expected)
    check(failures)


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("name", sorted(CASES))
def test_training_matches_tf_compat_v1_train(name, backend):
    case = CASES[name]
    ref = reference(case)["overridden"]
    train = run_spec(case.text(), backend).train
    failures = mismatch("train.loss (before each step)", train.loss, ref["loss"])
    for n, value in ref["params"].items():
        failures += mismatch(f"train.params.{n}", train.final.get(n), value)
    failures += mismatch("final_loss", train.final_loss, ref["final_loss"])
    for step, (got, expected) in enumerate(zip(train.gradients, ref["step_gradients"])):
        for n, value in expected.items():
            failures += mismatch(f"clipped gradient of {n} at step {step}", got.get(n), value)
    check(failures)
