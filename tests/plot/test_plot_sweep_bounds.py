"""plot sweep: the ±1 std band of a bounded column (an accuracy) is clipped to its range,
while an unbounded one (final_loss) is drawn as mean ± std even below 0.

Expected edges are numpy's mean ± std (ddof 1) of the values written here, clipped by hand.
"""
import csv

import matplotlib
import numpy as np
import pytest
from sweep_fixture import LRS, write_sweep

from gradcli.plot.sweep import bounds, sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load

matplotlib.use("Agg")

# per seed: hardtanh near 1 with one bad seed (mean + std > 1), identity near 0 (mean - std < 0)
ACCURACY = {"hardtanh": {"0": 1.0, "1": 0.55, "2": 1.0},
            "identity": {"0": 0.0, "1": 0.0, "2": 0.3}}


@pytest.fixture
def sweep_dir(tmp_path):
    root = tmp_path / "sw"
    write_sweep(root)
    with open(root / "results.csv") as f:
        table = list(csv.DictReader(f))
    for r in table:
        if r["final.accuracy.train"]:  # the failed run keeps its empty cell
            r["final.accuracy.train"] = repr(ACCURACY[r["override_map.sign"]][r["seed"]])
    with open(root / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return root, table


def values(table, sign, lr):
    return np.array([float(r["final.accuracy.train"]) for r in table if r["override_map.sign"] == sign
                     and r["train.optimizer.lr"] == lr and r["final.accuracy.train"]])


def band_edges(ax, gid):
    (band,) = [c for c in ax.collections if c.get_gid() == gid]
    return np.concatenate([p.vertices[:, 1] for p in band.get_paths()])


def test_an_accuracy_band_stays_within_0_and_1(sweep_dir):
    root, table = sweep_dir
    series = sweep_series(load(root), "train.optimizer.lr", "final.accuracy.train",
                          "override_map.sign")
    assert series.bounds == (0.0, 1.0)
    fig = sweep_figure("ste-lr", series)
    (ax,) = fig.axes
    for sign in ("hardtanh", "identity"):
        ys = band_edges(ax, f"band:{sign}")
        for lr in LRS:
            v = values(table, sign, lr)
            mean, std = v.mean(), v.std(ddof=1)
            assert mean + std > 1 or mean - std < 0  # the data does pass a bound
            for edge in (min(max(mean - std, 0.0), 1.0), min(max(mean + std, 0.0), 1.0)):
                assert np.min(np.abs(ys - edge)) < 1e-12
        assert ys.min() >= 0.0 and ys.max() <= 1.0
        # the band's edge lines are its clipped edges too, point for point
        lower, upper = [np.asarray(li.get_ydata(), dtype=float) for li in ax.get_lines()
                        if li.get_gid() == f"band-edge:{sign}"]
        mean = np.array([values(table, sign, lr).mean() for lr in LRS])
        std = np.array([values(table, sign, lr).std(ddof=1) for lr in LRS])
        np.testing.assert_allclose(lower, np.clip(mean - std, 0, 1), rtol=0, atol=1e-12)
        np.testing.assert_allclose(upper, np.clip(mean + std, 0, 1), rtol=0, atol=1e-12)
    # one encoding of the spread: a band, and no error bar repeating it (caps are "_" lines)
    assert not [li for li in ax.get_lines() if li.get_marker() == "_"]
    assert " ".join(ax.get_title().split()).endswith("bands clipped to [0, 1]")


def test_a_categorical_axis_clips_its_error_bars(sweep_dir):
    root, _ = sweep_dir
    series = sweep_series(load(root), "override_map.sign", "final.accuracy.train")
    fig = sweep_figure("ste-lr", series)
    (ax,) = fig.axes
    tops = [seg[:, 1] for c in ax.collections for seg in c.get_segments()]
    assert tops and min(t.min() for t in tops) >= 0.0 and max(t.max() for t in tops) <= 1.0
    assert max(t.max() for t in tops) == 1.0  # hardtanh's mean + std passes 1: cut at 1


def test_final_loss_is_not_bounded_and_its_band_is_mean_plus_minus_std(sweep_dir):
    root, _ = sweep_dir
    series = sweep_series(load(root), "train.optimizer.lr", "final_loss", "override_map.sign")
    assert series.bounds is None and not series.clipped()
    (ax,) = sweep_figure("ste-lr", series).axes
    ys = band_edges(ax, "band:identity")
    line = series.lines[[li.label for li in series.lines].index("identity")]
    np.testing.assert_allclose(ys.min(), np.nanmin(line.mean - line.std), rtol=1e-12)
    assert "clipped" not in ax.get_title()


@pytest.mark.parametrize("column, means, want", [
    ("final.accuracy.test", [0.2, 1.0], (0.0, 1.0)),
    ("final.top1_acc.train", [0.5], (0.0, 1.0)),
    ("final.Accuracy_val.train", [0.5], (0.0, 1.0)),
    ("final.accurate.train", [0.5], None),          # not a share by its name
    ("final.accuracy.train", [0.5, 1.5], None),     # a mean past 1: not what the name says
    ("y/x.sign_agreement", [0.5, np.nan], (0.0, 1.0)),
    ("y/x.cosine", [-0.5], (-1.0, 1.0)),
    ("final_loss", [0.5], None),
    ("y/x.max_abs_diff", [0.5], None),
])
def test_which_columns_are_bounded(column, means, want):
    assert bounds(column, means) == want
