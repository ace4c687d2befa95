"""compare --format csv and markdown hold every number of compare's JSON document.

Exact cells come from numpy written here: loss sum(w*w), gradient 2w, sgd w <- w - lr*2w, so
each step scales w by (1 - 2 lr); the metric size = sum(|w|).
"""
import csv
import io
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).resolve().parents[2]
QUAD = """name: {name}
inputs:
  w: [2.0, -1.0]
outputs:
  loss: sum(w * w)
train:
  loss: loss
  optimizer: {{name: sgd, lr: {lr}}}
  steps: 3
  metrics: {{size: sum(abs(w))}}
"""
LOG = """name: log-{lr}
inputs:
  w: 1.0
outputs:
  loss: log(w)
train:
  loss: loss
  optimizer: {{name: sgd, lr: {lr}}}
  steps: 4
  on_nonfinite: stop
"""
SQUARE = "name: square\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x * x)\n"
BLOBS_TRAIN = ('train={loss: loss, optimizer: {name: sgd, lr: 0.5}, epochs: 3, batch_size: 8, '
               'metrics: {acc: "mean(cast((z > 0) == (y > 0), dtype(z)))"}}')


def compare(*args):
    return CliRunner().invoke(cli, ["compare", *args], env={"NO_COLOR": "1", "COLUMNS": "160"})


def outputs(*args, code=0):
    """The JSON, CSV (parsed) and markdown of one comparison, each exiting with `code`."""
    texts = {}
    for fmt in ("json", "csv", "markdown"):
        result = compare(*args, "--format", fmt)
        assert result.exit_code == code, (fmt, result.stdout, result.stderr)
        texts[fmt] = result.stdout
    rows = list(csv.DictReader(io.StringIO(texts["csv"])))
    return json.loads(texts["json"]), rows, texts["markdown"]


@pytest.fixture
def quads(tmp_path):
    paths = []
    for name, lr in (('"=1+2"', 0.25), ("quad-b", 0.125)):  # a formula for a name: the guard
        path = tmp_path / f"{len(paths)}.yaml"
        path.write_text(QUAD.format(name=name, lr=lr))
        paths.append(str(path))
    return paths


def sgd(lr, steps=3):
    w = np.array([2.0, -1.0])
    losses, sizes = [], [np.sum(np.abs(w))]
    for _ in range(steps):
        losses.append(np.sum(w * w))
        w = w - lr * 2 * w
        sizes.append(np.sum(np.abs(w)))
    return losses, np.sum(w * w), sizes


def numbers(value):
    """Every number of a JSON document (not booleans), as JSON writes it."""
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [json.dumps(value)]
    if value in ("NaN", "Infinity", "-Infinity"):  # JSON's non-finite numbers
        return [value]
    return []


def csv_numbers(rows):
    def is_number(cell):
        try:
            return not isinstance(json.loads(cell), (bool, str, list, dict, type(None)))
        except ValueError:
            return False
    return [r["value"] for r in rows if is_number(r["value"])]


def assert_holds_every_number(doc, rows, markdown):
    assert Counter(csv_numbers(rows)) == Counter(numbers(doc))  # each leaf once, nothing else
    shown = Counter(re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|NaN|-?Infinity", markdown))
    floats = Counter(n for n in numbers(doc) if not n.lstrip("-").isdigit())
    assert not floats - shown, floats - shown  # every float at least as often as in JSON
    ints = {n for n in numbers(doc) if n.lstrip("-").isdigit()}
    assert all(re.search(rf"(?<![\d.]){n}(?![\d.])", markdown) for n in ints)


def cell(rows, **where):
    found = [r["value"] for r in rows if all(r[k] == str(v) for k, v in where.items())]
    assert len(found) == 1, (where, found)
    return found[0]


def test_two_trained_specs_csv_and_markdown_hold_the_json_and_numpy_values(quads):
    doc, rows, markdown = outputs(*quads, "--tolerance", "0.1", code=1)  # the curves differ
    assert_holds_every_number(doc, rows, markdown)
    assert list(rows[0]) == ["comparison", "spec", "section", "run", "label", "output", "input",
                             "quantity", "part", "step", "kind", "element", "value"]
    (la, fa, sa), (lb, fb, sb) = sgd(0.25), sgd(0.125)
    for run, (losses, final, sizes) in enumerate(((la, fa, sa), (lb, fb, sb))):
        for step, loss in enumerate(losses):
            assert float(cell(rows, section="curves", run=run, kind="loss", step=step)) == loss
        for k, size in enumerate(sizes):  # evaluated before the first step and after each
            assert float(cell(rows, section="curves", run=run, kind="metrics", quantity="size",
                              part="train", step=k, element=f"[{k}]")) == size
        assert float(cell(rows, section="curves", run=run, kind="final", quantity="loss")) == final
        assert float(cell(rows, section="train", run=run, quantity="final_loss", kind="values")) == final
    assert cell(rows, section="compare", kind="tolerance") == "0.1"
    assert cell(rows, section="comparison", kind="within_tolerance") == "false"
    assert cell(rows, section="train", quantity="final_loss", kind="within") == "false"
    assert float(cell(rows, section="train", quantity="final_loss", kind="max_diff")) == abs(fb - fa)
    assert cell(rows, section="gradients", input="w", kind="within") == "true"
    assert [cell(rows, section="gradients", run=1, input="w", kind="overridden", element=f"[{k}]")
            for k in (0, 1)] == ["4.0", "-2.0"]  # 2w; a negative number is not guarded
    # the name "=1+2" is spec text: never a formula in a spreadsheet, plain in markdown
    assert cell(rows, section="comparison", run=0, kind="run") == "'=1+2"
    assert {r["label"] for r in rows if r["run"] == "0"} == {"'=1+2"}
    assert not any(v.startswith(("=", "+", "@")) for r in rows for v in r.values())
    lines = markdown.splitlines()
    assert "| step | =1+2 | quad-b |" in lines
    assert f"| final | {json.dumps(fa)} | {json.dumps(fb)} |" in lines
    assert "| `loss/w` | [4.0, -2.0] | [4.0, -2.0] | [4.0, -2.0] | 0.0 | true | false |" in lines
    size = lines.index("### size (train) side by side")
    assert lines[size + 5] == f"| 1 | {json.dumps(sa[1])} | {json.dumps(sb[1])} |"
    # the evaluation after the last step is the final row, shown once (as run's table)
    assert lines[size + 7] == f"| 3 (final) | {json.dumps(sa[3])} | {json.dumps(sb[3])} |"
    assert lines[size + 8] == "" and "| final |" not in lines[size:size + 9]
    results = lines.index("### training results side by side")
    assert lines[results + 4:results + 9] == [
        "| steps | 3 | 3 |", "| epochs | null | null |",
        f"| final loss | {json.dumps(fa)} | {json.dumps(fb)} |",
        f"| size (train) | {json.dumps(sa[3])} | {json.dumps(sb[3])} |", "| stopped | no | no |"]


def test_exit_codes_follow_the_tolerance_in_every_format(quads):
    # outside the tolerance every format exits 1 (the test above); inside it or without one, 0
    assert compare(*quads, "--format", "csv").exit_code == 0
    assert compare(*quads, "--format", "markdown", "--tolerance", "10").exit_code == 0
    bad = compare(quads[0], "--format", "csv")
    assert bad.exit_code == 2 and "compare needs two specs" in bad.stderr


def test_two_data_specs_with_metrics_on_both_parts(tmp_path):
    for name in ("two_blobs.csv", "two_blobs.yaml"):
        shutil.copy(ROOT / "experiments" / "data" / name, tmp_path / name)
    other = tmp_path / "seed1.yaml"
    other.write_text((tmp_path / "two_blobs.yaml").read_text()
                     .replace("seed: 0", "seed: 1").replace("name: two-blobs", "name: seed1"))
    doc, rows, markdown = outputs(str(tmp_path / "two_blobs.yaml"), str(other), "--set", BLOBS_TRAIN)
    assert_holds_every_number(doc, rows, markdown)
    for run, curve in enumerate(doc["curves"]):
        train = curve["train"]
        assert train["epochs"] == 3 and train["eval_steps"] == [0, 3, 6, 9]
        for part in ("train", "test"):
            got = [float(cell(rows, section="curves", run=run, kind="metrics", quantity="acc",
                              part=part, element=f"[{k}]")) for k in range(4)]
            assert got == train["metrics"]["acc"][part]
            assert float(cell(rows, section="curves", run=run, kind="final", quantity="acc",
                              part=part)) == train["final"]["acc"][part]
        assert cell(rows, section="curves", run=run, kind="epochs") == "3"
    assert "### acc (test) side by side" in markdown and "| epochs | 3 | 3 |" in markdown


def test_several_specs_across_backends(tmp_path, quads):
    square = tmp_path / "square.yaml"
    square.write_text(SQUARE)
    doc, rows, markdown = outputs(str(square), quads[0], "--backends", "numpy,torch",
                                  "--tolerance", "1e-9")
    assert_holds_every_number(doc, rows, markdown)
    assert {r["comparison"]: r["spec"] for r in rows if r["section"] == "comparison"} == {
        "0": "square", "1": "'=1+2"}
    assert cell(rows, comparison=0, kind="path") == str(square)
    assert cell(rows, section="compare", kind="within_tolerance") == "true"
    assert [cell(rows, comparison=0, section="comparison", run=k, kind="run") for k in (0, 1)] == [
        "numpy", "torch"]
    assert cell(rows, comparison=0, run=1, kind="train") == ""  # square does not train
    x = np.array([1.0, 2.0, 3.0])
    assert [float(cell(rows, comparison=0, run=1, kind="overridden", element=f"[{k}]"))
            for k in range(3)] == (2 * x).tolist()
    losses, final, _ = sgd(0.25)
    assert [float(cell(rows, comparison=1, run=1, section="curves", kind="loss", step=k))
            for k in range(3)] == losses
    assert f"## square ({square}) across backends" in markdown
    assert f"## =1+2 ({quads[0]}) across backends" in markdown
    assert "| step | numpy | torch |" in markdown
    assert markdown.count("### training loss side by side") == 1  # square has no curves


def test_a_stopped_run_its_reason_and_birth(tmp_path):
    """log(w) by sgd: w <- w - lr/w; from w = 1, lr 2 reaches w = -1 after one step, lr 0.5
    reaches w = -0.5 after two: the loss is NaN there and training stops."""
    paths = []
    for lr in (2.0, 0.5):
        paths.append(tmp_path / f"log{lr}.yaml")
        paths[-1].write_text(LOG.format(lr=lr))
    doc, rows, markdown = outputs(*map(str, paths), "--tolerance", "1e-9", code=1)
    assert_holds_every_number(doc, rows, markdown)
    log_half = repr(float(np.log(0.5)))
    for run, (step, losses) in enumerate(((1, ["0.0", "NaN"]), (2, ["0.0", log_half, "NaN"]))):
        assert [cell(rows, section="curves", run=run, kind="loss", step=k)
                for k in range(len(losses))] == losses
        assert cell(rows, section="curves", run=run, kind="stopped.step") == str(step)
        assert cell(rows, section="curves", run=run, kind="stopped.reason") == "non-finite loss"
        assert cell(rows, section="curves", run=run, kind="stopped.nonfinite.op") == "log"
        assert cell(rows, section="curves", run=run, kind="final", quantity="loss") == "NaN"
    assert "| stopped | step 1: non-finite loss | step 2: non-finite loss |" in markdown
    assert "### log-0.5 stopped: where the non-finite value was born" in markdown
    assert f"| 1 | NaN | {json.dumps(float(np.log(0.5)))} |" in markdown


def test_the_csv_example_of_docs_output_md(tmp_path):
    """docs/output.md's spec, compared across numpy and torch, gives the rows the page shows."""
    page = (ROOT / "docs" / "output.md").read_text()
    spec = re.search(r"```yaml\n(.*?)```", page, re.S).group(1)
    shown = re.search(r"```csv\n(.*?)```", page, re.S).group(1).splitlines()
    shutil.copy(ROOT / "experiments" / "data" / "two_blobs.csv", tmp_path / "two_blobs.csv")
    (tmp_path / "blobs.yaml").write_text(spec)
    result = compare(str(tmp_path / "blobs.yaml"), "--backends", "numpy,torch", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 150 and lines[0] == shown[0] and set(shown) <= set(lines)
