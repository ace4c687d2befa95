"""compare says where the float32 allowance was applied: the training table's heading and
its JSON rows only when a trained run is float32 (review6's leftover: an untrained float32
run put it on the training table), and every row's `float32_rtol` key, in JSON, CSV and
markdown alike.

The values are checked against numpy (the gradient and SGD written out here).
"""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
SPEC = ("name: {name}\ndtype: {dtype}\ninputs:\n  w: [0.5, -1.5]\noutputs:\n  loss: sum(w * w)\n"
        "{train}")
TRAIN = "train: {loss: loss, optimizer: {name: sgd, lr: 0.1}, steps: 2}\n"


def compare(tmp_path, runs, *extra):
    paths = []
    for name, dtype, train in runs:
        path = tmp_path / f"{name}.yaml"
        path.write_text(SPEC.format(name=name, dtype=dtype, train=TRAIN if train else ""))
        paths.append(str(path))
    return CliRunner().invoke(cli, ["compare", *paths, "--tolerance", "1e-6", *extra], env=ENV)


LR = float(np.float32(0.1))


def sgd(w, lr=LR, steps=2):
    """As tf.compat.v1.train: the learning rate is a float32 tensor cast to w's dtype
    (docs/spec.md)."""
    for _ in range(steps):
        w = w - lr * 2 * w  # d sum(w*w)/dw = 2w
    return w


MIXED = [("a", "float32", False), ("b", "float64", True), ("c", "float64", True)]


def test_an_untrained_float32_run_puts_no_allowance_on_the_training_table(tmp_path):
    result = compare(tmp_path, MIXED, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    w = np.array([0.5, -1.5])
    np.testing.assert_allclose(doc["rows"][0]["overridden"][1], 2 * w, rtol=0)
    np.testing.assert_allclose(doc["rows"][0]["overridden"][0], (2 * w.astype(np.float32)), rtol=0)
    assert doc["rows"][0]["float32_rtol"] == 2e-5  # a float32 run is among the gradients
    by = {r["quantity"]: r for r in doc["train"]}
    np.testing.assert_allclose(by["params.w"]["values"][1], sgd(w), rtol=1e-15)
    assert all(r["float32_rtol"] is None for r in doc["train"])  # only float64 runs trained
    table = compare(tmp_path, MIXED).stdout
    gradients, training = table.split("training side by side")[:2]
    assert "≤ 1e-06 + 2e-05·|first|" in gradients
    assert "≤ 1e-06 + 2e-05" not in training.split("side by side")[0] and "≤ 1e-06" in training


def test_a_trained_float32_run_puts_it_on_the_training_table(tmp_path):
    runs = [("a", "float32", True), ("b", "float64", True)]
    doc = json.loads(compare(tmp_path, runs, "--format", "json").stdout)
    by = {r["quantity"]: r for r in doc["train"]}
    w32 = sgd(np.array([0.5, -1.5], np.float32), np.float32(0.1))
    np.testing.assert_allclose(by["params.w"]["values"][0], w32, rtol=1e-7)
    assert all(r["float32_rtol"] == 2e-5 for r in doc["train"])
    training = compare(tmp_path, runs).stdout.split("training side by side")[1]
    assert "≤ 1e-06 + 2e-05·|first|" in training


def test_csv_and_markdown_carry_float32_rtol(tmp_path):
    csv = compare(tmp_path, MIXED, "--format", "csv").stdout.splitlines()
    assert any(",gradients,,,loss,w,,,,float32_rtol,,2e-05" in line for line in csv), csv
    assert any(",train,,,,,params.w,,,float32_rtol,," in line and line.endswith(",")
               for line in csv), csv
    markdown = compare(tmp_path, MIXED, "--format", "markdown").stdout
    assert "float32_rtol" in markdown and "2e-05" in markdown
