"""A --set, --param or sweep key train.… on a spec with no train: block says that the block is
missing, where the key was written, exit 2: not 'train.optimizer: missing the required key
name' (the first of the keys the created block lacks, then the next, and the next)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

NO_TRAIN = "inputs: {x: [1.0, 2.0]}\noutputs: {y: sum(x)}\n"
SAID = ("the spec has no train: block, and this key alone would create one: add train: to the "
        "spec (loss, optimizer with name and lr, steps or epochs), then set or sweep its keys")


@pytest.mark.parametrize("override", ["train.optimizer.lr=0.1", "train.steps=3"])
def test_a_set_key_under_train_says_the_block_is_missing(spec_error, override):
    err = spec_error(NO_TRAIN, overrides=[override])
    assert str(err) == f"--set {override.partition('=')[0]}: {SAID}"


@pytest.mark.parametrize("overrides", [
    ["train={loss: y, optimizer: {name: sgd, lr: 0.5}, steps: 2}"],
    ["train.steps=2", "train.optimizer={name: sgd, lr: 0.5}"],  # built key by key, complete
])
def test_a_whole_train_block_may_still_be_set(load, overrides):
    exp = load(NO_TRAIN, overrides=overrides)
    assert exp.train.steps == 2 and exp.train.hyper == {"lr": 0.5}


def test_a_block_inside_train_created_by_a_key_is_named(spec_error):
    trains = NO_TRAIN + "train: {loss: y, optimizer: {name: sgd, lr: 0.5}, steps: 2}\n"
    err = spec_error(trains, overrides=["train.schedule.step.every=3"])
    assert ("the spec has no train.schedule: block, and this key alone would create one: add "
            "train.schedule: to the spec with its required keys") in str(err)


def test_a_sweep_key_under_train_is_reported_where_it_was_written(tmp_path):
    path = tmp_path / "e10.yaml"
    path.write_text(NO_TRAIN + "sweep: {train.optimizer.lr: [0.1, 0.2]}\n")
    done = CliRunner().invoke(cli, ["check", str(path)])
    assert done.exit_code == 2
    assert f"{path}:3:9: train.optimizer.lr: {SAID}" in done.output
    assert "missing the required key" not in done.output and "Traceback" not in done.output


def test_a_param_key_under_train_says_so_too(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(NO_TRAIN)
    done = CliRunner().invoke(cli, ["sweep", str(path), "--param", "train.optimizer.lr=0.1,0.2",
                                    "--out", str(tmp_path / "sw")])
    assert done.exit_code == 2
    assert SAID in done.output and "missing the required key" not in done.output
