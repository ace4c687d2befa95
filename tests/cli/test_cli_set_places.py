"""Where an error in a --set value is placed: the flag and its key, and the column in the value
(a --set value has no line; it used to read `--set:0:1`, or name a line 1 it does not have)."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

EXAMPLE = Path(__file__).parent.parent.parent / "experiments" / "data" / "two_blobs.yaml"
TRAIN = ["--set", "train={loss: loss, optimizer: {name: sgd, lr: 0.1}, steps: 1}"]


def error(*args) -> str:
    result = CliRunner().invoke(cli, ["run", str(EXAMPLE), "-q", "--no-numeric", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr and ":0:" not in result.stderr
    return next(line for line in result.stderr.splitlines() if line.startswith("error: "))


@pytest.mark.parametrize("args, said", [
    # found while training (a metric's shape): the whole value, so no column
    ([*TRAIN, "--set", "train.metrics.acc=z"],
     "--set train.metrics.acc: train.metrics.acc gives shape (24,); a metric is one number"),
    # found while building (an op fails): the column of its operator in the value
    (["--set", "let.z=matmul(X, w) + [1.0, 2.0, 3.0]"],
     "--set let.z: add() failed: the shapes (24,) and (3,) do not broadcast: the first "
     "operand's last axis has 24 elements but the second operand's last axis has 3; an "
     "elementwise op pairs the axes from the last, and the two lengths of each pair must be "
     "equal or one of them 1 (at column 14 of the --set value 'matmul(X, w) + [1.0, 2.0, 3.0]')"),
    # found while loading: a name clash names the --set that made the first one
    (["--set", "data.features=w"],
     f"error: {EXAMPLE}:11:3: inputs.w: 'w' is already an input (set by --set data.features); "
     "names must be unique across inputs, let, outputs and functions"),
])
def test_a_set_value_is_placed_by_flag_key_and_column(args, said):
    line = error(*args)
    assert said in line, line
    if "inputs.w" not in said:
        assert line.startswith(f"error: {EXAMPLE}: --set ")
