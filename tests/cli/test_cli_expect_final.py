"""expect.train.final: the final loss and each metric on the train and test parts, checked
within expect.tolerance; a wrong one fails (exit 1) naming the value, a bad block is a spec
error (exit 2).

The expected numbers come from test_cli_train_e2e's oracle: numpy written from spec-v2's
definitions, never a gradcli run.
"""
from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from blobs_fixture import blobs_spec as spec
from click.testing import CliRunner
from test_cli_train_e2e import oracle

from gradcli.cli import cli
from gradcli.spec import json_schema


def with_expect(path, block: str):
    path.write_text(path.read_text() + "expect:\n" + block)
    return path


def run(path, *extra):
    return CliRunner().invoke(cli, ["run", str(path), "--no-numeric", *extra])


def final_block(loss, train, test, rtol="1e-9"):
    return (f"  tolerance: {{rtol: {rtol}, atol: 0}}\n"
            f"  train:\n    final:\n      loss: {loss!r}\n"
            f"      accuracy: {{train: {train!r}, test: {test!r}}}\n")


def test_final_values_computed_with_numpy_pass(tmp_path):
    want = oracle()
    acc = want["accuracy"]
    path = with_expect(spec(tmp_path), final_block(want["final_loss"], acc["train"][-1],
                                                   acc["test"][-1]))
    result = run(path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["expect"]["passed"] is True


def test_a_wrong_final_metric_fails_with_a_clear_message(tmp_path):
    want = oracle()
    acc = want["accuracy"]
    wrong = acc["test"][-1] - 0.1
    path = with_expect(spec(tmp_path), final_block(want["final_loss"], acc["train"][-1], wrong))
    result = run(path)
    assert result.exit_code == 1, result.output
    assert f"train.final.accuracy.test: expected {wrong:.6g}, got {acc['test'][-1]:.6g}" \
        in result.stdout
    assert "train.final.loss" not in result.stdout and "train.final.accuracy.train" \
        not in result.stdout


def test_a_wrong_final_loss_fails_and_the_tolerance_decides(tmp_path):
    want = oracle()
    acc = want["accuracy"]
    off = want["final_loss"] * (1 + 1e-3)
    strict = with_expect(spec(tmp_path), final_block(off, acc["train"][-1], acc["test"][-1]))
    result = run(strict, "--format", "json")
    assert result.exit_code == 1
    failures = json.loads(result.stdout)["expect"]["failures"]
    assert len(failures) == 1 and failures[0].startswith("train.final.loss: expected")
    loose = with_expect(spec(tmp_path, name="loose.yaml"),
                        final_block(off, acc["train"][-1], acc["test"][-1], rtol="1e-2"))
    assert run(loose).exit_code == 0


def test_a_test_value_without_a_test_part_fails(tmp_path):
    path = spec(tmp_path)
    path.write_text(path.read_text().replace("  test: 0.2\n", ""))
    with_expect(path, "  train:\n    final:\n      accuracy: {test: 0.5}\n")
    result = run(path, "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["expect"]["failures"] == [
        "train.final.accuracy.test: expected 0.5, got none (the run has no test part)"]


@pytest.mark.parametrize("block, phrase", [
    ("      acuracy: {train: 1}\n", "'acuracy' is neither loss nor a metric of train.metrics"),
    ("      accuracy: {tset: 1}\n", "unknown key 'tset'"),
    ("      accuracy: 0.9\n", "expected a mapping {train: number, test: number}"),
    ("      loss: high\n", "expected a number"),
])
def test_a_bad_final_block_is_a_spec_error_with_its_place(tmp_path, block, phrase):
    path = with_expect(spec(tmp_path), "  train:\n    final:\n" + block)
    result = run(path)
    assert result.exit_code == 2, result.output
    assert phrase in result.stderr and "Traceback" not in result.stderr
    assert "expect.train.final" in result.stderr and f"{path.name}:" in result.stderr


def test_the_schema_takes_the_final_block_and_refuses_a_stray_part(tmp_path):
    doc = yaml.safe_load(with_expect(spec(tmp_path), final_block(0.3, 0.9, 0.8)).read_text())
    jsonschema.validate(doc, json_schema())
    doc["expect"]["train"]["final"]["accuracy"]["valid"] = 0.5
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, json_schema())
