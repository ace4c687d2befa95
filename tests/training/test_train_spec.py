"""The train keys of spec-v2: placed SpecErrors for bad values; v1 defaults kept."""
from __future__ import annotations

import numpy as np
import pytest
from oracle import dataset

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

HEAD = """
inputs:
  w: [1.0, 2.0]
  k: {value: [1.0, 1.0], trainable: false}
outputs:
  loss: sum(square(w * k))
"""
DATA_HEAD = """
data: {load: d.npz, features: X, labels: y}
inputs:
  w: [0.1, 0.2, 0.3]
let:
  z: matmul(X, w)
outputs:
  loss: mean(square(z - cast(y, dtype(z))))
"""


@pytest.fixture
def folder(tmp_path):
    x, y = dataset()
    np.savez(tmp_path / "d.npz", X=x, y=y)
    return tmp_path


def error(text: str, path: str = "spec.yaml") -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec_text(text, path=path)
    return info.value


@pytest.mark.parametrize("train, key, words, line", [
    ("  schedule: {cosine: {steps: 0}}", "train.schedule.cosine.steps", "integer between 1", 9),
    ("  schedule: {linear: {steps: 3}}", "train.schedule.linear", "unknown key 'linear'", 9),
    ("  schedule: {step: {every: 2}}", "train.schedule.step", "'gamma'", 9),
    ("  schedule: {exponential: {gamma: 0}}", "train.schedule.exponential.gamma", "positive", 9),
    ("  schedule: {step: {every: 2, gamma: 0.5}, exponential: {gamma: 0.9}}", "train.schedule",
     "exactly one", 9),
    ("  constraints: {k: clip(k, 0, 1)}", "train.constraints.k", "not trainable", 9),
    ("  constraints: {v: clip(w, 0, 1)}", "train.constraints.v", "not an input", 9),
    ("  constraints: {w: 'clip(q, 0, 1)'}", "train.constraints.w", "'q'", 9),
    ("  metrics: {loss: sum(w)}", "train.metrics.loss", "'loss' is taken", 9),
    ("  metrics: {m: sum(w,}", "train.metrics.m", "", 9),
    ("  on_nonfinite: halt", "train.on_nonfinite", "stop, error, continue", 9),
    ("  eval_every: 0", "train.eval_every", "integer between 1", 9),
    ("  epochs: 3", "train.epochs", "needs a data: section", 9),
    ("  batch_size: 3", "train.batch_size", "needs a data: section", 9),
    ("  optimizer: {name: rmsprop, lr: 0.1, decay: 1.0}", "train.optimizer.decay", "below 1", 9),
])
def test_bad_train_values_are_placed_spec_errors(train, key, words, line):
    text = HEAD + "train:\n  optimizer: {name: sgd, lr: 0.1}\n" + train + "\n"
    if "optimizer" in train:
        text = HEAD + "train:\n" + train + "\n"
        line = 8
    exc = error(text)
    assert exc.key == key and words in exc.bare_message
    assert exc.path == "spec.yaml" and exc.line == line


def test_data_needs_epochs_or_steps(folder):
    exc = error(DATA_HEAD + "train: {optimizer: {name: sgd, lr: 0.1}}\n",
                str(folder / "spec.yaml"))
    assert exc.key == "train" and "epochs and steps may not both be missing" in exc.bare_message


def test_without_data_steps_default_to_one():
    exp = load_spec_text(HEAD + "train: {optimizer: {name: rmsprop, lr: 0.1}}\n")
    assert exp.train.steps == 1 and exp.train.epochs is None
    assert exp.train.hyper == {"lr": 0.1, "decay": 0.9, "momentum": 0.0, "epsilon": 1e-10}
    assert exp.train.on_nonfinite == "stop" and exp.train.eval_every == 1


def test_a_constraint_of_another_shape_points_at_its_expression():
    text = HEAD + "train:\n  optimizer: {name: sgd, lr: 0.1}\n  constraints: {w: sum(w)}\n"
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(text, path="spec.yaml"), numeric=False)
    exc = info.value
    assert "shape ()" in exc.bare_message and "(2,)" in exc.bare_message
    assert (exc.line, exc.column) == (9, 20)


def test_a_metric_must_be_one_number(backend):
    text = HEAD + "train:\n  optimizer: {name: sgd, lr: 0.1}\n  metrics: {m: w * 2}\n"
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(text, path="spec.yaml"), backend=backend, numeric=False)
    assert "one number" in info.value.bare_message and info.value.line == 9


def test_schema_has_the_new_keys():
    from gradcli.spec import json_schema
    train = json_schema()["properties"]["train"]["properties"]
    assert {"batch_size", "epochs", "schedule", "constraints", "metrics", "eval_every",
            "on_nonfinite"} <= set(train)
    assert train["on_nonfinite"]["enum"] == ["stop", "error", "continue"]
    assert set(train["schedule"]["properties"]) == {"cosine", "step", "exponential"}
    assert "rmsprop" in train["optimizer"]["properties"]["name"]["enum"]


def test_too_many_steps_from_epochs_is_placed_at_epochs(folder):
    """17 rows in batches of 1 for 100,000 epochs would be 1,700,000 steps: refused at the key."""
    text = (DATA_HEAD.replace("y}", "y, test: 0.25}") +
            "train:\n  optimizer: {name: sgd, lr: 0.1}\n  batch_size: 1\n  epochs: 100000\n")
    with pytest.raises(SpecError) as info:
        runner.run(load_spec_text(text, path=str(folder / "spec.yaml")), numeric=False)
    assert info.value.key == "train.epochs" and "1700000 steps" in info.value.bare_message
    assert info.value.line == 12 and info.value.source_line.strip() == "epochs: 100000"
