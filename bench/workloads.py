"""The workloads: their sizes (full and --quick), their seeded inputs and how closely peers must agree.

Every peer gets the same numpy arrays (made here from one seed) and must
return the same outputs as the hand-written numpy floor, in the same order:
  W1 [y, dy/dx]                 W2 [y, dy/dx, dy/dw]
  W3 [loss, dX, dW1, db1, dW2]  W4 [sum(y), d sum(y)/dx]
  W5 [W1, b1, W2] after the training steps        W6 (no outputs: exit code 0)
  W7 [W1, b1, W2, b2, final loss on the training part] after the epochs
"""
from __future__ import annotations

import numpy as np

WORKLOADS = ["W1", "W2", "W3-f32", "W3-f64", "W4", "W5", "W6", "W6-help", "W6-list", "W6-schema",
             "W6-check", "W7"]
COLD = ["W1", "W2", "W3-f32", "W3-f64", "W4", "W5"]  # the cold path: build + gradients + first values
STARTUP = [w for w in WORKLOADS if w.startswith("W6")]  # a CLI command, process start to exit

DESCRIPTIONS = {
    "W1": "scalar chain: 2000 x y = tanh(y * 1.0001 + 0.1), 0-d float64",
    "W2": "wide elementwise: sum(sign(x) * w + 0.5 * x * x), 1e6 float64, hard-tanh STE for sign",
    "W3-f32": "MLP forward+backward, X[1024,256] W1[256,512] b1[512] W2[512,10], float32",
    "W3-f64": "MLP forward+backward, X[1024,256] W1[256,512] b1[512] W2[512,10], float64",
    "W4": "deep chain: 100,000 x y = y * 0.999 + 0.001 on 16 float64",
    "W5": "training: 200 SGD steps (lr 0.1, clip_by_global_norm 1.0), W3's MLP at batch 128",
    "W6": "`gradcli run experiments/ste_sign_quantize_grad.yaml` (the demo) vs `python -c 'import numpy'`",
    "W6-help": "`gradcli --help` vs `python -c 'import numpy'`",
    "W6-list": "`gradcli list ops` vs `python -c 'import numpy'`",
    "W6-schema": "`gradcli schema` vs `python -c 'import numpy'`",
    "W6-check": "`gradcli check experiments/ste_sign_quantize_grad.yaml` vs `python -c 'import numpy'`",
    "W7": "training on data: 20 epochs of BinaryConnect (64-32-10, sign with the hard-tanh STE, "
          "rmsprop 0.01, weights clipped to [-1, 1]) on digits, batch 64: 440 steps",
}

_MLP_FULL = dict(batch=1024, d_in=256, hidden=512, classes=10)
_MLP_QUICK = dict(batch=32, d_in=16, hidden=32, classes=10)
SIZES = {
    "W1": {"full": dict(n=2000), "quick": dict(n=50)},
    "W2": {"full": dict(n=1_000_000), "quick": dict(n=1000)},
    "W3-f32": {"full": dict(_MLP_FULL, dtype="float32"), "quick": dict(_MLP_QUICK, dtype="float32")},
    "W3-f64": {"full": dict(_MLP_FULL, dtype="float64"), "quick": dict(_MLP_QUICK, dtype="float64")},
    "W4": {"full": dict(n=100_000, width=16), "quick": dict(n=1200, width=16)},  # > recursion limit
    "W5": {"full": dict(_MLP_FULL, batch=128, steps=200, lr=0.1, clip=1.0, dtype="float64"),
           "quick": dict(_MLP_QUICK, batch=16, steps=10, lr=0.1, clip=1.0, dtype="float64")},
    "W6": {"full": dict(), "quick": dict()},
    **{f"W6-{k}": {"full": dict(command=c), "quick": dict(command=c)}
       for k, c in [("help", "--help"), ("list", "list ops"), ("schema", "schema"),
                    ("check", "check {demo}")]},
    "W7": {"full": dict(epochs=20, batch=64, lr=0.01, seed=0),  # steps: from the data (make_data)
           "quick": dict(epochs=1, batch=64, lr=0.01, seed=0)},
}

# W1's gradient underflows to exactly 0 after ~1600 steps (|dy/dy_prev| ~ 0.63), so
# every peer is also checked on a short chain whose gradient is far from zero.
EXTRA_CHECKS = {"W1": [dict(n=40)]}


def cold_sizes(workload: str, quick: bool) -> dict:
    """The cold path's sizes: the workload's own, but W5 is one training step (its first)."""
    sizes = dict(SIZES[workload]["quick" if quick else "full"])
    if workload == "W5":
        sizes["steps"] = 1
    return sizes


def function_name(workload: str) -> str:
    """The peer-module function that implements a workload: W3-f32 -> w3."""
    return workload.split("-")[0].lower()


def make_data(workload: str, sizes: dict, seed: int = 0) -> dict:
    """The workload's inputs as numpy arrays, plus its sizes, from one seed."""
    rng = np.random.default_rng(seed)
    d = dict(sizes)
    kind = function_name(workload)
    if kind == "w1":
        d["x"] = np.float64(0.3)
    elif kind == "w2":
        d["x"] = rng.normal(0.0, 1.0, d["n"])
        d["w"] = rng.normal(0.0, 1.0, d["n"])
    elif kind in ("w3", "w5"):
        dt = np.dtype(d["dtype"])
        b, i, h, c = d["batch"], d["d_in"], d["hidden"], d["classes"]
        d["X"] = rng.normal(0.0, 1.0, (b, i)).astype(dt)
        d["W1"] = (rng.normal(0.0, 1.0, (i, h)) / np.sqrt(i)).astype(dt)
        d["b1"] = rng.normal(0.0, 0.1, h).astype(dt)
        d["W2"] = (rng.normal(0.0, 1.0, (h, c)) / np.sqrt(h)).astype(dt)
        d["labels"] = rng.integers(0, c, b).astype(np.int64)
    elif kind == "w4":
        d["x"] = rng.uniform(-1.0, 1.0, d["width"])
    elif kind == "w7":
        d.update(digits_parts(d["seed"]))
        d["steps"] = d["epochs"] * -(-len(d["y_train"]) // d["batch"])
        d["W1"] = rng.uniform(-0.1, 0.1, (64, 32))
        d["b1"] = np.zeros(32)
        d["W2"] = rng.uniform(-0.1, 0.1, (32, 10))
        d["b2"] = np.zeros(10)
    return d


def digits_parts(seed: int) -> dict:
    """scikit-learn's digits as loaded (x, y: what a spec's data: holds once loaded) and its
    training part (x_train, y_train) split and standardized as spec-v2 defines it."""
    from sklearn.datasets import load_digits  # the data extra; only W7 needs it

    x, y = load_digits(return_X_y=True)
    x_train, y_train = training_part(x, y, seed)
    return {"x": x, "y": y, "x_train": x_train, "y_train": y_train}


def training_part(x: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """spec-v2's seeded split (test 0.25) of loaded rows, the training part standardized with
    its own statistics: what gradcli's train() does on every run, so the peers' runs do it too."""
    perm = np.random.default_rng([seed, 1]).permutation(len(x))
    n_test = round(0.25 * len(x))
    train = perm[n_test:]
    x_train, y_train = x[train].astype(np.float64), y[train].astype(np.int64)
    mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    return (x_train - mean) / np.where(std == 0, 1.0, std), y_train


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """spec-v2: epoch e visits the training rows in default_rng([seed, 2, e]).permutation(n)."""
    return np.random.default_rng([seed, 2, epoch]).permutation(n)


def tolerance(workload: str) -> float:
    """Relative tolerance (to each output's largest magnitude) for agreeing with the floor."""
    return 2e-3 if workload.endswith("f32") else 1e-6


def compare(got: list, want: list, rtol: float) -> tuple[bool, str]:
    """(agree, a sentence) comparing a peer's outputs with the floor's, output by output."""
    if len(got) != len(want):
        return False, f"returned {len(got)} outputs, the floor {len(want)}"
    worst = 0.0
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        g, w = np.asarray(g, dtype=np.float64), np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            return False, f"output {k} has shape {g.shape}, the floor's {w.shape}"
        # Differences below the smallest normal number are denormal flushing (XLA flushes to zero).
        scale = max(float(np.max(np.abs(w))) if w.size else 0.0, np.finfo(np.float64).tiny / rtol)
        rel = (float(np.max(np.abs(g - w))) if w.size else 0.0) / scale
        if not np.isfinite(rel) or rel > rtol:
            return False, f"output {k} differs from the floor by {rel:.3g} (relative; allowed {rtol:g})"
        worst = max(worst, rel)
    return True, f"max relative difference {worst:.2g}"
