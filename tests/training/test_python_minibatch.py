"""docs/training.md's hand-written mini-batch loop: numpy's numbers, and gradcli run's."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from sklearn.datasets import load_iris

from gradcli.cli import cli

ROOT = Path(__file__).resolve().parents[2]
LOOP = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "training.md").read_text(), re.S)[-1]

SPEC = """\
data: {load: {dataset: iris}, features: X, labels: y, test: 0.2, standardize: true}
inputs:
  W: {zeros: [4, 3]}
  b: {zeros: [3]}
outputs:
  loss: -mean(sum(one_hot(y, 3) * log_softmax(matmul(X, W) + b, axis=1), axis=1))
train: {loss: loss, optimizer: {name: rmsprop, lr: 0.01}, batch_size: 32, epochs: 3}
"""


def numpy_losses() -> list[float]:
    """Softmax regression by hand: spec-v2's split, scaling and order; TF 1's RMSProp."""
    x, y = load_iris(return_X_y=True)
    perm = np.random.default_rng([0, 1]).permutation(len(y))
    n_test = round(0.2 * len(y))
    xt, yt = x[perm[n_test:]], y[perm[n_test:]]
    xt = (xt - xt.mean(axis=0)) / xt.std(axis=0)
    W, b = np.zeros((4, 3)), np.zeros(3)
    lr, decay, eps = (float(np.float32(v)) for v in (0.01, 0.9, 1e-10))
    ms = [np.ones_like(W), np.ones_like(b)]
    losses = []
    for epoch in range(3):
        order = np.random.default_rng([0, 2, epoch]).permutation(len(yt))
        for start in range(0, len(yt), 32):
            rows = order[start:start + 32]
            xb, onehot = xt[rows], np.eye(3)[yt[rows]]
            z = xb @ W + b
            logp = z - z.max(axis=1, keepdims=True)
            logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
            losses.append(-np.mean(np.sum(onehot * logp, axis=1)))
            d = (np.exp(logp) - onehot) / len(rows)
            for k, (var, g) in enumerate([(W, xb.T @ d), (b, d.sum(axis=0))]):
                ms[k] = decay * ms[k] + (1 - decay) * g * g
                var -= lr * g / np.sqrt(ms[k] + eps)
    return losses


def test_the_hand_written_loop_trains_to_numpys_numbers(capsys):
    scope: dict = {}
    exec(compile(LOOP, "training.md", "exec"), scope)
    assert capsys.readouterr().out == "12 1.098612 0.97527\n"
    np.testing.assert_allclose(scope["losses"], numpy_losses(), rtol=1e-12)
    assert sorted(scope["replays"]) == [24, 32]  # one compiled replay per batch shape


def test_gradcli_run_of_the_same_spec_gives_the_same_losses(tmp_path, capsys):
    exec(compile(LOOP, "training.md", "exec"), scope := {})
    capsys.readouterr()
    spec = tmp_path / "iris.yaml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, ["run", str(spec), "--format", "json", "--no-numeric"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    doc = doc[0] if isinstance(doc, list) else doc
    np.testing.assert_allclose(doc["train"]["loss"], scope["losses"], rtol=1e-12)
