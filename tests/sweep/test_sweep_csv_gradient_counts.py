"""sweep --format csv (the group report) carries the gradient statistics' `n` and `nonfinite`
as the JSON does (docs/sweeps.md: CSV carries every column): `<o>/<i>.n` and
`<o>/<i>.nonfinite`, appended after every earlier column, which keep their places. The
oracle counts the finite gradients with numpy."""
import csv
import io
import json

import numpy as np
import pytest

from gradcli.render_sweep import report_csv, report_json
from gradcli.sweep.stats import report

KEYS = ("seed", "train.optimizer.lr")
OVER = {(0, 0.1): [1.0, 2.0], (1, 0.1): ["NaN", 1.0], (2, 0.1): [3.0, 0.0],
        (0, 0.2): [1.0, 1.0], (1, 0.2): [0.0, 2.0], (2, 0.2): ["Infinity", 0.5]}
TRUE = [1.0, 0.0]


def _docs() -> list:
    return [{"run": f"{k:02d}", "params": {"seed": seed, "train.optimizer.lr": lr},
             "train": {"final_loss": 0.5, "final": {"loss": 0.5}},
             "summary": {"y": {"w": {"cosine": 1.0}}, "z": {"w": {"cosine": 1.0}}},
             "gradients": {"y": {"w": {"overridden": OVER[seed, lr], "true": TRUE}},
                           "z": {"w": {"overridden": [1.0, 1.0], "true": TRUE}}}}
            for k, (seed, lr) in enumerate(OVER)]


def test_the_csv_has_each_pairs_n_and_nonfinite_as_the_json_has():
    docs = _docs()
    text = report_csv(report(docs, KEYS))
    header = next(csv.reader(io.StringIO(text)))
    stats = [f"{p}.{s}" for p in ("y/w", "z/w")
             for s in ("grad_mean_norm", "grad_std", "bias", "cosine_of_means")]
    counts = ["y/w.n", "y/w.nonfinite", "z/w.n", "z/w.nonfinite"]
    assert header[-len(stats) - len(counts):] == stats + counts  # earlier columns kept in place
    rows = list(csv.DictReader(io.StringIO(text)))
    groups = json.loads(report_json(report(docs, KEYS)))["groups"]
    for row, group, lr in zip(rows, groups, (0.1, 0.2)):
        g = np.array([[float(v) for v in OVER[s, lr]] for s in range(3)])
        finite = int(np.isfinite(g).all(axis=1).sum())
        assert (row["y/w.n"], row["y/w.nonfinite"]) == (str(finite), str(3 - finite))
        assert (row["z/w.n"], row["z/w.nonfinite"]) == ("3", "0")
        stats_json = group["gradients"]["y"]["w"]
        assert (int(row["y/w.n"]), int(row["y/w.nonfinite"])) == (stats_json["n"],
                                                                  stats_json["nonfinite"])
        kept = g[np.isfinite(g).all(axis=1)]
        assert float(row["y/w.grad_mean_norm"]) == pytest.approx(
            np.linalg.norm(kept.mean(axis=0)), rel=1e-15)
