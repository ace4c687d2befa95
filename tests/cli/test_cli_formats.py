"""--format markdown and csv carry everything the JSON document carries.

The numbers are checked against numpy written here: loss = sum(w*w) with
gradient 2w, r = sum(log(x) * w) with gradient log(x), two sgd steps w <- w - 0.1 * 2w.
"""
import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """name: full
description: every part of a result
inputs:
  w: [1.0, 2.0]
  x: {value: [0.0, 4.0], trainable: false}
override_map:
  exp: identity
outputs:
  loss: sum(w * w)
  r: sum(log(x) * w)
train:
  loss: loss
  optimizer: {name: sgd, lr: 0.1}
  steps: 2
expect:
  values: {loss: 6.0}
"""
W, X = np.array([1.0, 2.0]), np.array([0.0, 4.0])
# the lint's warning, placed at the entry (a run's warnings carry the lint's)
UNMATCHED = ("{}:7:3: override_map.exp: override_map entry 'exp' -> 'identity' matches no op: "
             "no exp op is built (the most common silent no-op of gradient_override_map)")


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "full.yaml"
    path.write_text(SPEC)
    return str(path)


def run(spec, fmt):
    result = CliRunner().invoke(cli, ["run", spec, "--format", fmt])
    assert result.exit_code == 1, result.stderr  # the expect block is written to fail
    return result.stdout


def sgd():
    w, steps = W.copy(), []
    for _ in range(2):
        steps.append((float(np.sum(w * w)), w.copy(), 2 * w))
        w = w - 0.1 * 2 * w
    return steps, w


def test_csv_is_one_long_table_with_every_section(spec):
    rows = list(csv.DictReader(io.StringIO(run(spec, "csv"))))
    assert list(rows[0]) == ["experiment", "backend", "section", "output", "input", "step", "kind",
                             "element", "value"]

    def cells(**where):
        return [r["value"] for r in rows if all(r[k] == str(v) for k, v in where.items())]

    with np.errstate(divide="ignore"):
        log_x = np.log(X)
    assert cells(section="values", output="loss") == [repr(float(np.sum(W * W)))]
    assert cells(section="values", output="r") == ["-Infinity"]
    assert [float(v) for v in cells(section="gradients", output="loss", input="w", kind="overridden")] \
        == (2 * W).tolist()
    assert [float(v) for v in cells(section="gradients", output="r", input="w", kind="true")] \
        == log_x.tolist()
    assert cells(section="summary", output="loss", input="w", kind="sign_agreement") == ["1.0"]
    assert cells(section="overrides", kind="op") == ["exp"]
    assert cells(section="overrides", kind="matched_ops") == ["0"]
    assert cells(section="warnings") == [UNMATCHED.format(spec)]
    assert "log(x)" in cells(section="nonfinite", kind="expr", element="[0]")
    steps, final = sgd()
    for k, (loss, _, grad) in enumerate(steps):
        assert float(cells(section="train", kind="loss", step=k)[0]) == pytest.approx(loss)
        assert [float(v) for v in cells(section="train", kind="gradients", step=k)] \
            == pytest.approx(grad.tolist())
    assert [float(v) for v in cells(section="train", kind="params", input="w")] \
        == pytest.approx(final.tolist())
    assert float(cells(section="train", kind="final_loss")[0]) == pytest.approx(np.sum(final ** 2))
    assert cells(section="expect", kind="passed") == ["false"]
    assert cells(section="expect", kind="failure")[0].startswith("values.loss: expected 6, got 5")
    assert cells(section="run", kind="description") == ["every part of a result"]


def test_markdown_holds_the_summary_overrides_training_warnings_and_nonfinite(spec):
    text = run(spec, "markdown")
    assert text.startswith("## full\n\nevery part of a result\n\nbackend `numpy`")
    for heading in ("### values", "### gradients of `loss`", "### gradients of `r`",
                    "### overridden vs true", "### overrides", "### nonfinite", "### training",
                    "### expect", "### warnings"):
        assert f"\n{heading}\n" in text, heading
    steps, final = sgd()
    row = next(line for line in text.splitlines() if line.startswith("| 1 | "))
    step, loss, params, grads = row.strip("| ").split(" | ")
    assert float(loss) == pytest.approx(steps[1][0])
    assert json.loads(params)["w"] == pytest.approx(final.tolist())
    assert json.loads(grads)["w"] == pytest.approx(steps[1][2].tolist())
    assert "| `loss` | 5.0 |" in text and "| `r` | -Infinity |" in text
    assert "| exp | identity | null | 0 |" in text
    assert f"- {UNMATCHED.format(spec)}" in text
    assert "| forward | log | log(x) |" in text


def test_markdown_has_no_run_of_blank_lines_without_a_description(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("inputs:\n  x: 1.0\noutputs:\n  y: x * x\n")
    text = CliRunner().invoke(cli, ["run", str(path), "--format", "markdown"]).stdout
    assert text.startswith("## s\n\nbackend `numpy`") and "\n\n\n" not in text
