"""The bundled training experiments against direct torch implementations written here.

Each experiment (BinaryConnect and quantization-aware training on digits,
gradient reversal on the two-domain toy) is trained a second time in torch:
the data read directly (scikit-learn's loader, numpy's csv reader), split,
standardized and batched with spec-v2's formulas computed here with numpy, the
straight-through estimators as torch.autograd.Function, the optimizers,
schedules and constraints written out as tf.compat.v1.train's kernels do them
(hyper-parameters as float32 constants cast to float64). Only the initial
weights come from gradcli (its seeded uniform/normal draws, read from the
loaded spec's inputs, as spec-v2 allows); everything else is independent.
The losses per step, the metric curves and the final metrics in
`gradcli run --format json` must equal the reference's, and the spec's
expect block must hold for the reference too.
"""
from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from sklearn.datasets import load_digits

from gradcli.cli import cli
from gradcli.spec import load_spec

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
BINARYCONNECT = EXPERIMENTS / "binaryconnect_digits.yaml"
QAT = EXPERIMENTS / "quantization_aware_digits.yaml"
REVERSAL = EXPERIMENTS / "gradient_reversal_domains.yaml"
T = torch.float64


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny tensors: torch's intra-op threads only wait on each other (20x slower on 2 busy cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ----- spec-v2's data definitions, computed here with numpy -----

def split(n: int, test: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(test rows, training rows): perm[:n_test] and perm[n_test:] of default_rng([seed, 1])."""
    perm = np.random.default_rng([seed, 1]).permutation(n)
    n_test = round(test * n)
    return perm[:n_test], perm[n_test:]


def parts(x: np.ndarray, y: np.ndarray, test: float, seed: int, standardize: bool) -> dict:
    test_rows, train_rows = split(len(x), test, seed)
    x_train, x_test = x[train_rows], x[test_rows]
    if standardize:  # the training part's mean and std (ddof 0); a constant column is only centred
        mean, std = x_train.mean(axis=0), x_train.std(axis=0)
        std = np.where(std == 0, 1.0, std)
        x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    return {"train": (x_train, y[train_rows]), "test": (x_test, y[test_rows])}


def batches(n_train: int, batch_size: int | None, seed: int, epoch: int):
    """Epoch `epoch` visits default_rng([seed, 2, epoch]).permutation(n_train) in batches."""
    order = np.random.default_rng([seed, 2, epoch]).permutation(n_train)
    size = batch_size or n_train
    return [order[i:i + size] for i in range(0, n_train, size)]


def digits() -> tuple[np.ndarray, np.ndarray]:
    x, y = load_digits(return_X_y=True)
    return x.astype(np.float64), y.astype(np.int64)


def two_domains() -> tuple[np.ndarray, np.ndarray]:
    """The csv's columns x1, x2, domain are the features; `label` is the label."""
    rows = np.loadtxt(EXPERIMENTS / "data" / "two_domains.csv", delimiter=",", skiprows=1)
    return rows[:, :3], rows[:, 3].astype(np.int64)


# ----- the estimators, as a person would write them in torch -----

class SignSTE(torch.autograd.Function):
    """sign forward; backward dy (identity) or dy where |w| <= 1 (hardtanh)."""

    @staticmethod
    def forward(ctx, w, kind):
        ctx.save_for_backward(w)
        ctx.kind = kind
        return torch.sign(w)

    @staticmethod
    def backward(ctx, dy):
        (w,) = ctx.saved_tensors
        return (dy if ctx.kind == "identity" else torch.where(w.abs() <= 1, dy, 0.0)), None


class RoundSTE(torch.autograd.Function):
    """round half to even forward (torch.round, as tf.round); the same two backwards."""

    @staticmethod
    def forward(ctx, x, kind):
        ctx.save_for_backward(x)
        ctx.kind = kind
        return torch.round(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return (dy if ctx.kind == "identity" else torch.where(x.abs() <= 1, dy, 0.0)), None


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


def learning_rate(lr: float, schedule: dict | None, t: int) -> float:
    """spec-v2's schedules at step t."""
    if not schedule:
        return lr
    (kind, p), = schedule.items()
    if kind == "cosine":
        return lr * 0.5 * (1 + math.cos(math.pi * min(t, p["steps"]) / p["steps"]))
    if kind == "step":
        return lr * p["gamma"] ** math.floor(t / p["every"])
    return lr * p["gamma"] ** t


class Optimizer:
    """sgd, momentum (MomentumOptimizer, not nesterov) and rmsprop (RMSPropOptimizer, momentum 0)."""

    def __init__(self, params: dict, name: str, hyper: dict, schedule: dict | None):
        self.params, self.name, self.hyper, self.schedule = params, name, hyper, schedule
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

def binaryconnect(kind: str):
    def model(p, x, y):
        h = torch.relu(x @ SignSTE.apply(p["W1"], kind) * 0.125 + p["b1"])
        logits = h @ SignSTE.apply(p["W2"], kind) * 0.25 + p["b2"]
        return cross_entropy(logits, y, 10).mean(), {"accuracy": accuracy(logits, y)}
    return model


def clip_weights(p):
    p["W1"].clamp_(-1, 1)
    p["W2"].clamp_(-1, 1)


def quantized(kind: str):
    def q(v, lo, hi):  # clip's gradient is dy inside [lo, hi] (bounds included), as tf.clip_by_value
        return RoundSTE.apply(torch.clamp(v, lo, hi) * 3, kind) / 3

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


# ----- gradcli's side -----

@functools.lru_cache(maxsize=None)
def gradcli_json(path: Path, *sets: str) -> dict:
    """`gradcli run PATH --format json --set ...`, which must exit 0 (its expect block passes)."""
    args = ["run", str(path), "--format", "json"] + [a for s in sets for a in ("--set", s)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(result.stdout)


def initial_weights(path: Path, *sets: str) -> dict:
    """The trainable inputs as gradcli drew them (its seeded uniform/normal, not re-implemented)."""
    experiment = load_spec(path, sets)
    return {k: np.array(v.value, dtype=np.float64) for k, v in experiment.inputs.items() if v.trainable}


def assert_same_training(got: dict, want: dict, rtol: float = 1e-7) -> None:
    """gradcli's JSON `train` against the reference: every loss, metric value and final number."""
    assert got["steps"] == want["steps"] and got["epochs"] == want["epochs"]
    assert got["eval_steps"] == want["eval_steps"]
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=rtol, atol=1e-12)
    assert set(got["metrics"]) == set(want["metrics"])
    for name, curves in want["metrics"].items():
        assert set(got["metrics"][name]) == set(curves), name
        for part, values in curves.items():
            np.testing.assert_allclose(got["metrics"][name][part], values, rtol=rtol, atol=1e-12,
                                       err_msg=f"{name} on the {part} part")
    assert got["final"]["loss"] == pytest.approx(want["final"]["loss"], rel=rtol)
    for name, values in want["final"].items():
        if name != "loss":
            assert got["final"][name] == pytest.approx(values, rel=rtol, abs=1e-12), name
    assert got["stopped"] is None


# ----- the experiments -----

VARIANT = ("expect={finite: true}",)  # a --set variant trains to other numbers than the spec's expect


def reference_binaryconnect(kind: str, seed: int = 0) -> dict:
    x, y = digits()
    sets = [f"seed={seed}"]
    return train(binaryconnect(kind), initial_weights(BINARYCONNECT, *sets),
                 parts(x, y, 0.25, seed, standardize=True), seed=seed, epochs=5, batch_size=64,
                 optimizer="rmsprop", hyper={"lr": 0.01}, constraints=clip_weights)


@pytest.mark.parametrize("kind", ["hardtanh", "identity"])
def test_binaryconnect_trains_as_torch_does(kind):
    got = gradcli_json(BINARYCONNECT, f"override_map.sign={kind}")["train"]
    want = reference_binaryconnect(kind)
    assert want["steps"] == 5 * 22  # 1348 training rows: 21 batches of 64 and one of 4 per epoch
    assert_same_training(got, want)
    assert want["final"]["accuracy"]["test"] > 0.7  # it learns: chance is 0.1


def test_binaryconnect_clip_makes_hardtanh_and_identity_the_same_estimator():
    """The constraint keeps |W| <= 1, inside hardtanh's window: step for step the same numbers."""
    hard = gradcli_json(BINARYCONNECT)["train"]
    ident = gradcli_json(BINARYCONNECT, "override_map.sign=identity")["train"]  # meets hardtanh's expect
    assert hard["loss"] == ident["loss"] and hard["final"] == ident["final"]
    # In 5 epochs at lr 0.01 no weight reaches the clip: without it, still the same numbers.
    free = gradcli_json(BINARYCONNECT, "train.constraints=null", "override_map.sign=identity")["train"]
    assert free["loss"] == hard["loss"] and free["final"] == hard["final"]
    unclipped = train(binaryconnect("identity"), initial_weights(BINARYCONNECT),
                      parts(*digits(), 0.25, 0, standardize=True), seed=0, epochs=5, batch_size=64,
                      optimizer="rmsprop", hyper={"lr": 0.01})
    assert 0.3 < max(np.abs(unclipped["params"]["W1"]).max(), np.abs(unclipped["params"]["W2"]).max()) < 1


def reference_qat(kind: str, seed: int = 0) -> dict:
    x, y = digits()
    return train(quantized(kind), initial_weights(QAT, f"seed={seed}"),
                 parts(x, y, 0.25, seed, standardize=True), seed=seed, epochs=4, batch_size=64,
                 optimizer="momentum", hyper={"lr": 0.1, "momentum": 0.9},
                 schedule={"cosine": {"steps": 88}})


@pytest.mark.parametrize("kind", ["identity", "hardtanh"])
def test_quantization_aware_training_trains_as_torch_does(kind):
    got = gradcli_json(QAT, f"override_map.round={kind}", *VARIANT)["train"]
    want = reference_qat(kind)
    assert want["steps"] == 88
    assert_same_training(got, want)


def reference_reversal(scale: float, seed: int = 0) -> dict:
    return train(domain_adversarial(scale), initial_weights(REVERSAL, f"seed={seed}"),
                 parts(*two_domains(), 0.25, seed, standardize=False), seed=seed, epochs=300,
                 batch_size=None, optimizer="sgd", hyper={"lr": 0.5},
                 schedule={"exponential": {"gamma": 0.998}}, eval_every=50)


@pytest.mark.parametrize("scale", [1.0, 0.0])
def test_gradient_reversal_trains_as_torch_does(scale):
    got = gradcli_json(REVERSAL, f"let.hr=reverse_gradient(h, scale={scale})", *VARIANT)["train"]
    want = reference_reversal(scale)
    assert want["eval_steps"] == [0, 50, 100, 150, 200, 250, 300]
    assert_same_training(got, want)


def first_batch_gradient(model, params: dict, data: dict, *, seed: int, batch_size: int | None,
                         name: str) -> np.ndarray:
    """d loss / d params[name] on the first training batch of epoch 0, before any step."""
    p = {k: torch.tensor(v, dtype=T, requires_grad=True) for k, v in params.items()}
    x, y = data["train"]
    rows = batches(len(y), batch_size, seed, 0)[0]
    loss, _ = model(p, torch.tensor(x[rows], dtype=T), torch.tensor(y[rows]))
    return torch.autograd.grad(loss, [p[name]])[0].numpy()


EXPECTED = {  # spec, its reference run, and how to get its first-batch gradient
    "binaryconnect": (BINARYCONNECT, lambda: reference_binaryconnect("hardtanh"), binaryconnect("hardtanh"),
                      lambda: parts(*digits(), 0.25, 0, standardize=True), 64),
    "qat": (QAT, lambda: reference_qat("identity"), quantized("identity"),
            lambda: parts(*digits(), 0.25, 0, standardize=True), 64),
    "reversal": (REVERSAL, lambda: reference_reversal(1.0), domain_adversarial(1.0),
                 lambda: parts(*two_domains(), 0.25, 0, standardize=False), None),
}


@pytest.mark.parametrize("which", list(EXPECTED))
def test_the_expect_block_holds_for_the_reference(which):
    """The spec's expected numbers are the torch reference's (gradcli meets them: make test)."""
    path, reference, model, data, batch_size = EXPECTED[which]
    expect = load_spec(path).expect
    want = reference()
    tol = dict(rtol=expect.rtol, atol=expect.atol)
    assert expect.finite and set(expect.values) == {"loss"}
    np.testing.assert_allclose(expect.values["loss"], want["loss"][0], **tol)
    ((wrt, expected),) = expect.gradients["loss"].items()
    got = first_batch_gradient(model, initial_weights(path), data(), seed=0, batch_size=batch_size, name=wrt)
    np.testing.assert_allclose(expected, got, **tol)
    assert expect.train_params
    for name, expected in expect.train_params.items():
        np.testing.assert_allclose(expected, want["params"][name], **tol, err_msg=name)


def test_the_reversal_lambda_changes_the_outcome():
    """lambda 1 keeps the domain head more confused and fixes the target rows; 0 does neither."""
    on = gradcli_json(REVERSAL, "let.hr=reverse_gradient(h, scale=1.0)", *VARIANT)["train"]["final"]
    off = gradcli_json(REVERSAL, "let.hr=reverse_gradient(h, scale=0.0)", *VARIANT)["train"]["final"]
    assert on["target_accuracy"]["test"] > off["target_accuracy"]["test"] + 0.2
    assert on["domain_loss"]["train"] > off["domain_loss"]["train"]
    assert min(on["source_accuracy"]["train"], off["source_accuracy"]["train"]) > 0.95


def test_hardtanh_on_a_scaled_round_trains_worse_than_the_clipped_identity():
    identity = gradcli_json(QAT, "override_map.round=identity", *VARIANT)["train"]["final"]
    hardtanh = gradcli_json(QAT, "override_map.round=hardtanh", *VARIANT)["train"]["final"]
    assert identity["accuracy"]["test"] > hardtanh["accuracy"]["test"] + 0.03
    assert identity["loss"] < hardtanh["loss"]


def test_the_two_domain_csv_is_what_its_generator_writes(tmp_path):
    """experiments/data/two_domains.csv is make_two_domains.py's output, byte for byte."""
    script = EXPERIMENTS / "data" / "make_two_domains.py"
    copy = tmp_path / script.name
    copy.write_text(script.read_text())
    subprocess.run([sys.executable, str(copy)], check=True, cwd=tmp_path)
    committed = EXPERIMENTS / "data" / "two_domains.csv"
    assert (tmp_path / "two_domains.csv").read_bytes() == committed.read_bytes()
    x, y = two_domains()
    assert x.shape == (400, 3) and set(np.unique(x[:, 2])) == {0.0, 1.0} and set(np.unique(y)) == {0, 1}
    source, target = x[:, 2] == 0, x[:, 2] == 1
    # the cue x2 is shifted in the target domain; x1 is not
    assert x[target, 1].mean() - x[source, 1].mean() == pytest.approx(3.0, abs=0.3)
    assert abs(x[target, 0].mean() - x[source, 0].mean()) < 0.3
