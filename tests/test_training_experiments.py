"""The bundled training experiments against direct torch implementations.

Each experiment (BinaryConnect and quantization-aware training on digits,
gradient reversal on the two-domain toy) is trained a second time in torch
(tests/training_reference.py): the data read directly (scikit-learn's loader,
numpy's csv reader), split, standardized and batched with spec-v2's formulas
computed with numpy, the straight-through estimators as
torch.autograd.Function, the optimizers, schedules and constraints written out
as tf.compat.v1.train's kernels do them (hyper-parameters as float32 constants
cast to float64). Only the initial
weights come from gradcli (its seeded uniform/normal draws, read from the
loaded spec's inputs, as spec-v2 allows); everything else is independent.
The losses per step, the metric curves and the final metrics in
`gradcli run --format json` must equal the reference's, and the spec's
expect block must hold for the reference too.
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from training_reference import (
    EXPERIMENTS,
    binaryconnect,
    clip_weights,
    digits,
    domain_adversarial,
    first_batch_gradient,
    parts,
    quantized,
    train,
    two_domains,
)

from gradcli.cli import cli
from gradcli.spec import load_spec

BINARYCONNECT = EXPERIMENTS / "binaryconnect_digits.yaml"
QAT = EXPERIMENTS / "quantization_aware_digits.yaml"
REVERSAL = EXPERIMENTS / "gradient_reversal_domains.yaml"


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny tensors: torch's intra-op threads only wait on each other (20x slower on 2 busy cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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
                 parts(*two_domains(), 0.25, seed, standardize=False), seed=seed, epochs=100,
                 batch_size=None, optimizer="sgd", hyper={"lr": 1.0},
                 schedule={"exponential": {"gamma": 0.99}}, eval_every=20)


@pytest.mark.parametrize("scale", [1.0, 0.0])
def test_gradient_reversal_trains_as_torch_does(scale):
    got = gradcli_json(REVERSAL, f"let.hr=reverse_gradient(h, scale={scale})", *VARIANT)["train"]
    want = reference_reversal(scale)
    assert want["eval_steps"] == [0, 20, 40, 60, 80, 100]
    assert_same_training(got, want)


EXPECTED = {  # spec, its reference run, and how to get its first-batch gradient
    "binaryconnect": (BINARYCONNECT, lambda: reference_binaryconnect("hardtanh"), binaryconnect("hardtanh"),
                      lambda: parts(*digits(), 0.25, 0, standardize=True), 64),
    "qat": (QAT, lambda: reference_qat("identity"), quantized("identity"),
            lambda: parts(*digits(), 0.25, 0, standardize=True), 64),
    "reversal": (REVERSAL, lambda: reference_reversal(1.0), domain_adversarial(1.0),
                 lambda: parts(*two_domains(), 0.25, 0, standardize=False), None),
}


@pytest.mark.parametrize("which", list(EXPECTED))
def test_the_expect_block_and_the_gradient_table_are_the_reference(which):
    """The spec's expected numbers are the torch reference's (gradcli meets them: make test), and so
    is the overridden gradient in gradcli's table, on the first batch."""
    path, reference, model, data, batch_size = EXPECTED[which]
    experiment = load_spec(path)
    expect, want = experiment.expect, reference()
    tol = dict(rtol=expect.rtol, atol=expect.atol)
    assert expect.finite and set(expect.values) == {"loss"}
    np.testing.assert_allclose(expect.values["loss"], want["loss"][0], **tol)
    (wrt,) = experiment.wrt
    first = first_batch_gradient(model, initial_weights(path), data(), seed=0, batch_size=batch_size,
                                 name=wrt)
    table = gradcli_json(path)["gradients"]["loss"][wrt]
    np.testing.assert_allclose(table["overridden"], first, rtol=1e-9, atol=1e-13)
    for expected in expect.gradients.get("loss", {}).values():
        np.testing.assert_allclose(expected, first, **tol)
    assert expect.train_params
    for name, expected in expect.train_params.items():
        np.testing.assert_allclose(expected, want["params"][name], **tol, err_msg=name)
    if which != "reversal":  # the weights reach the loss only through sign or round: true gradient 0
        assert not np.any(table["true"]) and np.any(table["overridden"])


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
