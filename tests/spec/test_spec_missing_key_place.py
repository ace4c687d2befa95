"""A key missing from a block mapping is shown at the key that names the block (`train:`),
not under the block's first key, which looked like the culprit (tryout12: `train:` without
`optimizer` put the caret under `epochs`). A flow mapping keeps its `{`; a block given by
--set is shown at --set."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.errors import SpecError
from gradcli.spec import load_spec

HEAD = "inputs:\n  w: [1.0, 2.0]\noutputs:\n  loss: sum(w * w)\n"


def error(tmp_path, text: str, *overrides: str) -> str:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as caught:
        load_spec(path, overrides=list(overrides))
    return str(caught.value).replace(str(tmp_path) + "/", "")


@pytest.mark.parametrize("text, expected", [
    (HEAD + "train:\n  steps: 2\n  clip: {norm: 1}\n",
     "spec.yaml:5:1: train: missing the required key 'optimizer'\n    train:\n    ^"),
    (HEAD + "  z: sum(w)\ntrain:\n  steps: 2\n  optimizer: {name: sgd, lr: 0.1}\n",
     "spec.yaml:6:1: train: missing the required key 'loss' (there are several outputs, so "
     "which one to minimize must be said)\n    train:\n    ^"),
    (HEAD + "train:\n  steps: 2\n  optimizer:\n    momentum: 0.9\n",
     "spec.yaml:7:3: train.optimizer: missing the required key 'name'\n      optimizer:\n      ^"),
    (HEAD + "train:\n  steps: 2\n  optimizer:\n    name: sgd\n",
     "spec.yaml:7:3: train.optimizer: missing the required key 'lr' (the learning rate)\n"
     "      optimizer:\n      ^"),
    (HEAD + "train:\n  optimizer: {name: sgd, lr: 0.1}\n  schedule:\n    step:\n      every: 2\n",
     "spec.yaml:8:5: train.schedule.step: missing the required key 'gamma'\n        step:\n"
     "        ^"),
    ("data:\n  features: X\n  labels: y\n" + HEAD,
     "spec.yaml:1:1: data: missing the required key 'load': a .csv or .npz file beside the "
     "spec, or {dataset: NAME} (add load: {dataset: iris})\n    data:\n    ^"),
    ("functions:\n  f:\n    args: [x]\n    forward: x\n" + HEAD,
     "spec.yaml:2:3: functions.f: missing the required key 'gradient'\n      f:\n      ^"),
    (HEAD + "train:\n  steps: 2\n  optimizer: {momentum: 0.9}\n",  # a flow mapping: its {
     "spec.yaml:7:14: train.optimizer: missing the required key 'name'\n"
     "      optimizer: {momentum: 0.9}\n                 ^"),
])
def test_a_missing_key_is_shown_at_the_key_naming_the_block(tmp_path, text, expected):
    assert error(tmp_path, text) == expected


def test_a_block_given_by_set_is_shown_at_set(tmp_path):
    text = HEAD + "train:\n  steps: 2\n  optimizer:\n    name: sgd\n    lr: 0.1\n"
    assert error(tmp_path, text, "train.optimizer={momentum: 0.9}") == (
        "--set train.optimizer: missing the required key 'name'")


def test_the_cli_puts_the_caret_under_train(tmp_path):
    """The try-out's spec: data, and train with epochs and batch_size but no optimizer."""
    path = tmp_path / "d.yaml"
    path.write_text("data:\n  load: {dataset: iris}\n  features: X\n  labels: y\ninputs:\n"
                    "  W: {zeros: [4, 3]}\noutputs:\n  loss: mean(sparse_softmax_cross_entropy_"
                    "with_logits(y, X @ W))\ntrain:\n  epochs: 1\n  batch_size: 30\n")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (f"error: {path}:9:1: train: missing the required key 'optimizer'\n"
                             "    train:\n    ^\n")
