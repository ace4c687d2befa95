"""An `expect.train.loss` list longer than the run's steps can never be met. With `train.steps`
it is refused at load; an epochs-based data spec's step count is known once its data is split
and batched, so the run refuses it there, before the first step: a placed error (file, line,
column, key, the count and where it comes from), exit 2, never exit 1 with "expected shape
(6,), got (4,)" after training (note9).

The oracle for the step count: the csv's rows counted by numpy, the held-out share and the
batches per epoch by hand (ceil(train rows / batch_size) per epoch, as spec-v2 defines them).
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from blobs_fixture import CSV, blobs_spec
from click.testing import CliRunner

from gradcli.cli import cli


def steps_by_hand(epochs=4, batch_size=10, test=0.2) -> int:
    rows = len(np.loadtxt(CSV, delimiter=",", skiprows=1, usecols=(0, 1)))
    train_rows = rows - math.ceil(rows * test)  # 30 rows, 6 held out
    return epochs * math.ceil(train_rows / batch_size)


def write(tmp_path, n_losses: int, steps: str = "") -> Path:
    """tests/blobs_fixture's spec (4 epochs in batches of 10), `steps` added to its train."""
    path = blobs_spec(tmp_path, extra=f"expect:\n  train:\n    loss: {[0.5] * n_losses}\n")
    path.write_text(path.read_text().replace("  epochs: 4\n", f"  epochs: 4{steps}\n"))
    return path


def line_and_column(path: Path) -> tuple[int, int]:
    lines = path.read_text().splitlines()
    line = next(k for k, text in enumerate(lines) if text.startswith("    loss: ["))
    return line + 1, lines[line].index("[") + 1


@pytest.mark.parametrize("steps", ["", "\n  steps: 50"])  # steps above the epochs' count too
def test_too_many_expected_losses_for_the_epochs_is_a_placed_error_before_training(tmp_path,
                                                                                   steps):
    total = steps_by_hand()
    assert total == 12  # 24 training rows in batches of 10: 3 an epoch
    path = write(tmp_path, total + 2, steps)
    result = CliRunner().invoke(cli, ["run", str(path), "--no-numeric"], env={"NO_COLOR": "1"})
    assert result.exit_code == 2, result.output
    line, column = line_and_column(path)
    assert (f"{path}:{line}:{column}: expect.train.loss: expected at most {total} losses (4 "
            f"epochs of 3 batches of 24 training rows are {total} steps), got {total + 2}"
            in " ".join(result.stderr.split()))
    assert "training" not in result.stdout and "Traceback" not in result.output


def test_the_json_format_gets_the_error_document(tmp_path):
    path = write(tmp_path, steps_by_hand() + 1)
    result = CliRunner().invoke(cli, ["run", str(path), "--no-numeric", "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["exit_code"] == 2 and "expect.train.loss: expected at most 12 losses" in doc["error"]


@pytest.mark.parametrize("n_losses", [12, 5])  # as many as the steps, or fewer: a stopped run's
def test_as_many_losses_as_steps_or_fewer_run_and_are_compared(tmp_path, n_losses):
    path = write(tmp_path, n_losses)
    result = CliRunner().invoke(cli, ["run", str(path), "--no-numeric", "--format", "json"])
    doc = json.loads(result.stdout)
    assert len(doc["train"]["loss"]) == steps_by_hand()
    assert result.exit_code == 1  # 0.5 is not the loss: compared, and failed, not refused
    assert doc["expect"]["failures"][0].startswith("train.loss: ")


def test_steps_below_the_epochs_count_is_still_refused_at_load(tmp_path):
    path = write(tmp_path, 5, "\n  steps: 4")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    assert "expected at most 4 losses (train.steps is 4), got 5" in result.stderr
