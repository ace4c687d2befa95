"""Sweep values checked before anything runs (and by `gradcli check`), placed at the sweep
block; the empty --param list; a group where every run failed; --set and --backend."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from gradcli.cli import cli
from gradcli.render_sweep import report_tables
from gradcli.sweep.stats import report

ROOT = Path(__file__).parent.parent.parent

BASE = """\
inputs:
  w: {value: [1.0, 2.0]}
outputs:
  loss: sum(w * w)
train: {loss: loss, optimizer: {name: sgd, lr: 0.1}, steps: 3}
sweep:
  seed: [0, 1]
"""


def write(tmp_path, extra: str, name="s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(BASE + extra)
    return path


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [*map(str, args)], env=env)


@pytest.mark.parametrize("line, row, column, said", [
    ("  foo.bar: [1]\n", 8, 3, "foo: unknown key 'foo'"),
    ("  train.optimizer.lrr: [0.1]\n", 8, 3,
     "unknown key 'lrr' in train.optimizer (did you mean 'lr'?)"),
    ("  train.optimizer.lr: [0.1, abc]\n", 8, 29, "train.optimizer.lr: expected a number, got the "
                                                  "string 'abc'"),
    ("  zip:\n    train.steps: [2, 0]\n    train.optimizer.lr: [0.1, 0.2]\n", 9, 22,
     "train.steps"),
])
@pytest.mark.parametrize("command", ["check", "sweep", "run"])
def test_a_bad_sweep_key_or_value_is_placed_in_the_sweep_block(tmp_path, line, row, column,
                                                                 said, command):
    # run runs the spec without its sweep block, but refuses a bad one as check does
    path = write(tmp_path, line)
    out = tmp_path / "out"
    args = (command, path, "--jobs", 1, "--out", out) if command == "sweep" else (command, path)
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    where = f"{path}:{row}:{column}:"
    assert where in result.stderr and said in result.stderr
    assert "--set" not in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()  # nothing ran, no directory was made


def test_run_of_a_bad_sweep_block_prints_the_placed_error_as_its_document(tmp_path):
    path = write(tmp_path, "  train.optimizer.lrr: [0.1]\n")
    result = invoke("run", path, "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["path"] == str(path) and doc["exit_code"] == 2
    assert doc["error"].startswith(f"{path}:8:3: ")
    assert "unknown key 'lrr' in train.optimizer (did you mean 'lr'?)" in doc["error"]


def test_run_of_a_good_sweep_block_runs_the_spec_without_it(tmp_path):
    path = write(tmp_path, "  train.optimizer.lr: [0.05, 0.5]\n")
    result = invoke("run", path, "--format", "json", "--no-numeric")
    assert result.exit_code == 0, result.output
    w = np.array([1.0, 2.0])
    for _ in range(3):
        w = w - 0.1 * 2 * w  # the spec's own lr, not a swept one
    # float32 (the spec's `value:` inputs); lr 0.05 or 0.5 would give 0.729 * w or 0
    assert json.loads(result.stdout)["train"]["params"]["w"] == pytest.approx(w.tolist(),
                                                                            rel=1e-6)


def test_a_good_sweep_is_ok_and_a_value_that_only_fails_with_the_rest_is_not_checked(tmp_path):
    path = write(tmp_path, "  train.optimizer.lr: [0.05, 0.1]\n  train.steps: [1, 4]\n")
    result = invoke("check", path)
    assert result.exit_code == 0 and "ok " in result.stdout


def test_check_applies_set_before_the_swept_values(tmp_path):
    # momentum is a hyper-parameter of the momentum optimizer only: fine with --set, not without
    path = write(tmp_path, "  train.optimizer.momentum: [0.5, 0.9]\n")
    assert invoke("check", path).exit_code == 2
    assert invoke("check", path, "--set", "train.optimizer.name=momentum").exit_code == 0


def test_a_bad_param_value_names_the_param(tmp_path):
    path = write(tmp_path, "")
    result = invoke("sweep", path, "--param", "train.optimizer.lr=0.1,abc")
    assert result.exit_code == 2
    assert "--param train.optimizer.lr: with train.optimizer.lr='abc'" in result.stderr
    assert "expected a number" in result.stderr and "--set" not in result.stderr
    result = invoke("sweep", path, "--param", "foo.x=1")
    assert result.exit_code == 2 and "--param foo.x" in result.stderr \
        and "unknown key 'foo'" in result.stderr


def test_a_param_replaces_the_sweep_key_so_its_bad_values_are_not_checked(tmp_path):
    path = write(tmp_path, "  train.steps: [0]\n")
    assert invoke("sweep", path).exit_code == 2
    result = invoke("sweep", path, "--param", "train.steps=1", "--jobs", 1, "--format", "json")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("empty", ["", " ", "[]"])
def test_an_empty_param_list_says_so_and_shows_the_form(tmp_path, empty):
    path = write(tmp_path, "")
    result = invoke("sweep", path, "--param", f"train.optimizer.lr={empty}")
    assert result.exit_code == 2
    if empty == "[]":  # one value: an empty list, which the spec refuses as a number
        assert "expected a number" in result.stderr
    else:
        assert "the list of values is empty" in result.stderr
        assert "train.optimizer.lr=V1,V2" in result.stderr and "got a list" not in result.stderr


def test_a_group_where_every_run_failed_shows_a_dash_not_none():
    def doc(run, lr, loss, error=None):
        d = {"run": run, "params": {"seed": 0, "lr": lr}}
        if error:
            return {**d, "error": error, "exit_code": 2}
        return {**d, "train": {"final_loss": loss, "final": {"loss": loss}},
                "summary": {"y": {"x": {"cosine": 1.0}}},
                "gradients": {"y": {"x": {"overridden": [1.0], "true": [1.0]}}}}
    docs = [doc("0", -1, None, "bad"), doc("1", -1, None, "bad"), doc("2", 0.1, 0.25)]
    console = Console(width=200, record=True, color_system=None)
    for table in report_tables(report(docs, ("seed", "lr"))):
        console.print(table)
    text = console.export_text()
    assert "None" not in text
    (row,) = [line for line in text.splitlines() if "2 failed" in line]
    assert row.rstrip().rstrip("│").rstrip().endswith("—")
    assert "0.25" in text


def test_example_ste_spec_is_strict_clean_and_an_unused_gradient_still_warns(tmp_path):
    example = ROOT / "docs" / "examples" / "ste-binary-weights.yaml"
    result = invoke("check", "--strict", example)
    assert result.exit_code == 0 and "warning" not in result.stderr
    # the sweep is what uses PassThrough: without its override_map values, the warning is back
    text = example.read_text().replace("  override_map.Sign: [QuantizeGrad, PassThrough]\n", "")
    path = tmp_path / "ste.yaml"
    path.write_text(text)
    result = invoke("check", "--strict", path)
    assert result.exit_code == 2 and "'PassThrough' is used by no override_map" in result.stderr
    # the recorded sweep still holds the example's own text, keys and gradients
    meta = json.loads((ROOT / "docs" / "examples" / "ste-binary-weights-sweep" / "sweep.json")
                      .read_text())
    assert meta["spec_text"] == example.read_text()
    assert {r["params"]["override_map.Sign"] for r in meta["runs"]} == {"QuantizeGrad",
                                                                        "PassThrough"}


def test_set_and_backend_apply_to_every_run(tmp_path):
    path = write(tmp_path, "  train.steps: [1, 3]\n")
    out = tmp_path / "out"
    result = invoke("sweep", path, "--set", "train.optimizer.lr=0.25", "--set",
                    "inputs.w.value=[3.0, -1.0]", "--backend", "torch", "--jobs", 1,
                    "--out", out, "--format", "json")
    assert result.exit_code == 0, result.stderr
    runs = [json.loads(p.read_text()) for p in sorted((out / "runs").iterdir())]
    assert len(runs) == 4
    for run in runs:
        w = np.array([3.0, -1.0])
        for _ in range(run["params"]["train.steps"]):
            w = w - 0.25 * 2 * w  # sgd on sum(w*w), written out
        assert run["backend"] == "torch"
        assert run["train"]["params"]["w"] == pytest.approx(w.tolist(), abs=1e-12)
    assert json.loads((out / "sweep.json").read_text())["set"] == [
        "train.optimizer.lr=0.25", "inputs.w.value=[3.0, -1.0]", "backend=torch"]
    # resuming with other --set would mix two sweeps
    again = invoke("sweep", path, "--jobs", 1, "--out", out)
    assert again.exit_code == 2 and "--set/--backend" in again.stderr
    bad = invoke("sweep", path, "--set", "train.optimizer.lr=abc")
    assert bad.exit_code == 2 and "--set train.optimizer.lr" in bad.stderr
    help_text = invoke("sweep", "--help").output
    assert re.search(r"--set KEY=VALUE", help_text) and "--backend NAME" in help_text


def test_a_swept_input_the_spec_does_not_have_is_refused_with_the_input_names(tmp_path):
    # `--param inputs.W.value=...` (the input is `w`) used to add an unused input W and
    # report identical groups with exit 0; a `sweep:` key is checked by the same code.
    path = write(tmp_path, "")
    result = invoke("sweep", path, "--param", "inputs.W.value=0.1,0.5", "--jobs", 1)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "error: --param inputs.W.value: with inputs.W.value=0.1: inputs.W: no input 'W' in "
        "the spec (w); inputs.W.value=0.1 would add one, but --set and sweep keys only change "
        "existing inputs (did you mean 'w'?)\n")
    path = write(tmp_path, "  inputs.W.value: [[1.0, 2.0]]\n")
    for command in ("check", "sweep"):
        result = invoke(command, path)
        assert result.exit_code == 2
        assert f"{path}:8:3: inputs.W: no input 'W' in the spec (w)" in result.stderr
