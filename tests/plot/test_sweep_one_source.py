"""The sweep's JSON report, `plot sweep`'s band and `report DIR` show the same numbers.

A sweep directory written with sweep/results.py (as `gradcli sweep --out` writes it) where
one run diverged: its final_loss is NaN and its overridden gradient holds a NaN, and one
failed its expect but kept its result. The rules (docs/sweeps.md): a non-finite value is
left out of mean and std and counted; a failed run with a result is averaged. The oracle
is numpy on the finite values written here, never gradcli.
"""
import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from gradcli.cli import cli
from gradcli.plot.sweep import sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load
from gradcli.render_sweep import report_csv, report_json, report_tables
from gradcli.sweep.results import csv_text
from gradcli.sweep.stats import report

KEYS = ("seed", "train.optimizer.lr")
LOSS = {(0, 0.1): 0.5, (1, 0.1): "NaN", (2, 0.1): 0.75,
        (0, 0.2): 0.25, (1, 0.2): 0.375, (2, 0.2): 0.125}
OVER = {(0, 0.1): [1.0, 2.0], (1, 0.1): ["NaN", 1.0], (2, 0.1): [3.0, 0.0],
        (0, 0.2): [1.0, 1.0], (1, 0.2): [0.0, 2.0], (2, 0.2): [2.0, 0.5]}
TRUE = [1.0, 0.0]


def write_dir(root: Path) -> list:
    docs = []
    for k, (seed, lr) in enumerate(LOSS):
        docs.append({"run": f"{k:02d}", "params": {"seed": seed, "train.optimizer.lr": lr},
                     "train": {"final_loss": LOSS[seed, lr], "final": {"loss": LOSS[seed, lr]}},
                     "summary": {"y": {"w": {"cosine": 1.0, "max_abs_diff": 0.5,
                                             "sign_agreement": 1.0}}},
                     "gradients": {"y": {"w": {"overridden": OVER[seed, lr], "true": TRUE}}}})
        if (seed, lr) == (2, 0.1):  # an unmet expect: a failure that keeps its result
            docs[-1].update(error="expect: values.y: expected 1, got 2", exit_code=1)
    (root / "runs").mkdir(parents=True)
    (root / "sweep.json").write_text(json.dumps({"format": "gradcli-sweep-1", "keys": list(KEYS),
                                                 "spec_text": "name: diverging\n"}))
    for doc in docs:
        (root / "runs" / f"{doc['run']}.json").write_text(json.dumps(doc))
    (root / "results.csv").write_text(csv_text(docs, KEYS))
    return [json.loads(p.read_text()) for p in sorted((root / "runs").glob("*.json"))]


def finite(lr):
    return np.array([v for (s, r), v in LOSS.items() if r == lr and v != "NaN"])


def test_the_report_json_and_the_plots_band_come_from_the_same_numbers(tmp_path):
    docs = write_dir(tmp_path / "sw")
    groups = json.loads(report_json(report(docs, KEYS)))["groups"]
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", "final_loss")
    (line,) = series.lines
    for i, (lr, group) in enumerate(zip((0.1, 0.2), groups)):
        want = finite(lr)
        col = group["columns"]["final_loss"]
        assert col["mean"] == pytest.approx(want.mean(), rel=1e-15)  # the NaN run left out
        assert col["std"] == pytest.approx(np.std(want, ddof=1), rel=1e-15)
        assert (col["n"], col["nonfinite"]) == (len(want), 3 - len(want))
        assert group["n"] == 3  # every run has a result; n per column says how many averaged
        assert group["failed"] == (lr == 0.1)
        assert (line.mean[i], line.std[i], line.n[i]) == (col["mean"], col["std"], col["n"])
    assert series.failed == 0  # the failed run kept its result: drawn, as it is averaged
    assert series.nonfinite == 1 and "1 run without a finite final_loss left out" in series.notes()
    # the drawn band is mean ± std of those same numbers
    (ax,) = sweep_figure("diverging", series).axes
    (band,) = [c for c in ax.collections if c.get_gid() == "band:mean"]
    ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
    for group in groups:
        m, sd = group["columns"]["final_loss"]["mean"], group["columns"]["final_loss"]["std"]
        assert np.min(np.abs(ys - (m - sd))) < 1e-12 and np.min(np.abs(ys - (m + sd))) < 1e-12
    # the gradient statistics: the run with a NaN element is out and counted
    g = np.array([OVER[0, 0.1], OVER[2, 0.1]])
    gb, tb = g.mean(0), np.array(TRUE)
    stats = groups[0]["gradients"]["y"]["w"]
    assert (stats["n"], stats["nonfinite"]) == (2, 1)
    assert stats["grad_mean_norm"] == pytest.approx(np.sqrt(np.sum(gb ** 2)), rel=1e-15)
    assert stats["grad_std"] == pytest.approx(np.sqrt(np.mean(np.sum((g - gb) ** 2, 1))), rel=1e-15)
    assert stats["bias"] == pytest.approx(np.sqrt(np.sum((gb - tb) ** 2)), rel=1e-15)
    rows = list(csv.DictReader(io.StringIO(report_csv(report(docs, KEYS)))))
    assert [r["final_loss.nonfinite"] for r in rows] == ["1", "0"]
    assert float(rows[0]["final_loss.mean"]) == groups[0]["columns"]["final_loss"]["mean"]
    console = Console(width=200, record=True)
    for table in report_tables(report(docs, KEYS)):
        console.print(table)
    assert "0.625 ± 0.177 (1 non-finite)" in console.export_text()


def test_report_dir_shows_the_json_reports_numbers_and_counts(tmp_path):
    docs = write_dir(tmp_path / "sw")
    groups = report(docs, KEYS)["groups"]
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "sw"), "--output", str(out)])
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    from gradcli.render import number_text
    col = groups[0]["columns"]["final_loss"]
    cell = (f"{number_text(col['mean'], digits=4).plain} ± "
            f"{number_text(col['std'], digits=3).plain} (n=2, 1 non-finite)")
    assert cell in page
    grads = page.split("overridden gradient g over the runs")[1].split("</table>")[0]
    first = re.search(r"<td[^>]*>0\.1</td><td[^>]*>y/w</td>(.*?)</tr>", grads).group(1)
    assert "2 (1 non-finite)" in first
    want = number_text(groups[0]["gradients"]["y"]["w"]["grad_mean_norm"], digits=4).plain
    assert want in first
