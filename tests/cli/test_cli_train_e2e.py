"""Training on data end to end, as a user sees it: `run --format json|csv|markdown|table`,
`compare` and `plot train` on a logistic regression over experiments/data/two_blobs.csv
(the spec: tests/blobs_fixture.py).

The oracle is numpy: spec-v2's split, standardization and epoch order (tests/spec_v2.py), then
sgd on the logistic loss written here, the metrics at the evaluation points and the final loss
on the whole training part.
"""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from blobs_fixture import CSV, blobs_spec
from click.testing import CliRunner
from spec_v2 import batches, split, standardized

from gradcli.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def oracle(seed=0, lr=0.5, batch=10, epochs=4):
    """What training must report, computed with numpy from the csv."""
    raw = np.genfromtxt(CSV, delimiter=",", names=True, dtype=None, encoding="utf-8")
    x = np.column_stack([raw["x1"], raw["x2"]]).astype(np.float64)
    y = np.searchsorted(np.unique(raw["color"]), raw["color"])
    test, train = split(len(y), 0.2, seed)
    xs, ys = dict(zip(("train", "test"), standardized(x[train], x[test]))), {"test": y[test],
                                                                            "train": y[train]}
    w, b = np.array([0.5, -0.25]), 0.1

    def loss(xb, yb):
        z = xb @ w + b
        return float(np.mean(np.logaddexp(0, z) - yb * z))

    def accuracy(part):
        return float(np.mean((xs[part] @ w + b > 0) == ys[part]))

    losses, evals, acc = [], [0], {p: [accuracy(p)] for p in ("train", "test")}
    for epoch in range(epochs):
        for rows in batches(len(ys["train"]), batch, seed, epoch):
            xb, yb = xs["train"][rows], ys["train"][rows]
            losses.append(loss(xb, yb))
            dz = (1 / (1 + np.exp(-(xb @ w + b))) - yb) / len(yb)
            w, b = w - lr * (xb.T @ dz), b - lr * dz.sum()
        evals.append(len(losses))
        for p in acc:
            acc[p].append(accuracy(p))
    return {"loss": losses, "eval_steps": evals, "accuracy": acc,
            "final_loss": loss(xs["train"], ys["train"]), "w": w, "b": b}


def test_run_json_train_matches_numpy(tmp_path):
    result = invoke("run", blobs_spec(tmp_path), "--no-numeric", "--format", "json")
    assert result.exit_code == 0, result.output
    train, want = json.loads(result.stdout)["train"], oracle()
    assert train["steps"] == 12 and train["epochs"] == 4  # ceil(24 / 10) = 3 steps an epoch
    np.testing.assert_allclose(train["loss"], want["loss"], rtol=1e-12)
    assert train["eval_steps"] == want["eval_steps"] == [0, 3, 6, 9, 12]
    assert train["metrics"] == {"accuracy": want["accuracy"]}
    assert train["final"]["loss"] == pytest.approx(want["final_loss"], rel=1e-12)
    assert train["final"]["accuracy"] == {p: v[-1] for p, v in want["accuracy"].items()}
    assert train["final_loss"] == train["final"]["loss"] and train["stopped"] is None
    np.testing.assert_allclose(train["params"]["w"], want["w"], rtol=1e-12)


def test_run_csv_and_markdown_carry_the_evaluations(tmp_path):
    path, want = blobs_spec(tmp_path), oracle()
    result = invoke("run", path, "--no-numeric", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = [r for r in csv.DictReader(io.StringIO(result.stdout)) if r["section"] == "train"]
    test = [(int(r["step"]), float(r["value"])) for r in rows if r["kind"] == "metrics.test"]
    assert test == list(zip(want["eval_steps"], want["accuracy"]["test"]))
    assert [r["value"] for r in rows if r["kind"] == "epochs"] == ["4"]
    final = [float(r["value"]) for r in rows if r["kind"] == "final.loss"]
    assert final == [pytest.approx(want["final_loss"], rel=1e-12)]
    md = invoke("run", path, "--no-numeric", "--format", "markdown").stdout
    table = md[md.index("### training metrics"):].split("\n\n")[1].splitlines()
    assert table[0] == "| evaluation | step | accuracy (train) | accuracy (test) |"
    assert table[3] == (f"| 1 | 3 | {json.dumps(want['accuracy']['train'][1])} | "
                        f"{json.dumps(want['accuracy']['test'][1])} |")
    assert table[-1] == (f"| 4 | 12 (final) | {json.dumps(want['accuracy']['train'][-1])} | "
                         f"{json.dumps(want['accuracy']['test'][-1])} |")  # once, as the table


def test_run_table_has_a_row_per_epoch(tmp_path):
    result = invoke("run", blobs_spec(tmp_path), "--no-numeric")
    assert result.exit_code == 0, result.output
    want = oracle()
    lines = [line for line in result.stdout.splitlines() if line.startswith("│")]
    training = [[c.strip() for c in line.strip("│").split("│")] for line in lines][-5:]
    assert [r[:2] for r in training] == [["0", "0"], ["3", "1"], ["6", "2"], ["9", "3"],
                                         ["12 (final)", "4"]]  # the last evaluation is the final
    assert training[2][2] == f"{want['loss'][6]:.6g}"
    assert training[-1][2] == f"{want['final_loss']:.6g}"
    assert training[1][4] == f"{want['accuracy']['test'][1]:.6g}"


def test_compare_two_seeds_side_by_side(tmp_path):
    a, b = blobs_spec(tmp_path, 0, "a.yaml"), blobs_spec(tmp_path, 3, "b.yaml")
    result = invoke("compare", a, b, "--format", "json")
    assert result.exit_code == 0, result.output
    curves = json.loads(result.stdout)["curves"]
    for curve, seed in zip(curves, (0, 3)):
        want = oracle(seed)
        np.testing.assert_allclose(curve["train"]["loss"], want["loss"], rtol=1e-12)
        assert curve["train"]["metrics"]["accuracy"] == want["accuracy"]
    table = invoke("compare", a, b).stdout
    assert "accuracy (test) side by side" in table and "training results side by side" in table


def test_a_run_stopped_by_a_nonfinite_loss_says_where_in_every_format(tmp_path):
    path = tmp_path / "stop.yaml"
    path.write_text("name: stops\ninputs: {w: 1.0}\noutputs:\n  loss: log(w)\n"
                    "train: {loss: loss, optimizer: {name: sgd, lr: 1.0}, steps: 5}\n")
    # step 0: loss log(1) = 0, gradient 1/w = 1, w <- 1 - 1 = 0; step 1: log(0) = -inf
    doc = json.loads(invoke("run", path, "--no-numeric", "--format", "json").stdout)
    stopped = doc["train"]["stopped"]
    assert stopped["step"] == 1 and stopped["reason"] == "non-finite loss"
    assert stopped["nonfinite"] == doc["nonfinite"][0]
    assert stopped["nonfinite"]["expr"] == "log(w)" and stopped["nonfinite"]["born"] == "-Infinity"
    assert doc["train"]["loss"] == [0.0, "-Infinity"] and doc["train"]["steps"] == 1
    text = invoke("run", path, "--no-numeric").stdout
    assert "training stopped at step 1: non-finite loss; -inf born at log(w)" in text  # as the note
    rows = list(csv.DictReader(io.StringIO(invoke("run", path, "--no-numeric", "--format",
                                                  "csv").stdout)))
    assert [r["value"] for r in rows if r["kind"] == "stopped.nonfinite.expr"] == ["log(w)"]


def test_plot_train_draws_the_metric_at_each_epoch(tmp_path, monkeypatch):
    import gradcli.plot.train as module

    drawn = {}
    figure = module.train_figure

    def keep(title, runs, units=None, text=None):
        drawn["fig"] = fig = figure(title, runs, units, text)
        return fig
    monkeypatch.setattr(module, "train_figure", keep)
    result = invoke("plot", "train", blobs_spec(tmp_path), "--output", tmp_path / "t.png")
    assert result.exit_code == 0, result.output
    want = oracle()
    _, acc = drawn["fig"].axes
    lines = {line.get_label(): line for line in acc.get_lines()}
    np.testing.assert_array_equal(lines["blobs-train (test)"].get_xdata(), want["eval_steps"])
    np.testing.assert_array_equal(lines["blobs-train (test)"].get_ydata(), want["accuracy"]["test"])
    assert lines["blobs-train (test)"].get_linestyle() == "--"


def leaves(value):
    """Every scalar of a JSON document, written as the CSV writes a cell."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list) and value:
        for item in value:
            yield from leaves(item)
    elif isinstance(value, list):
        yield "[]"
    elif value is None:
        yield ""
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, float):
        yield repr(value)
    else:
        yield str(value)


@pytest.mark.parametrize("stops", [False, True])
def test_csv_holds_every_number_and_string_of_the_json(tmp_path, stops):
    from collections import Counter

    path = blobs_spec(tmp_path)
    if stops:  # b grows until exp(b) overflows: a stopped run with a birth record
        path.write_text(path.read_text().replace("* z)\n", "* z) - exp(b)\n"))
    doc = json.loads(invoke("run", path, "--format", "json").stdout)
    for key in ("overrides", "warnings", "conventions", "nonfinite"):  # no entries, no rows
        doc[key] = doc[key] or None
    assert (doc["train"]["stopped"] is not None) == stops
    rows = list(csv.DictReader(io.StringIO(invoke("run", path, "--format", "csv").stdout)))
    cells = Counter(r["value"] for r in rows)
    missing = Counter(v for v in leaves(doc) if v) - cells  # "" (null) has no row of its own
    assert not missing, missing
