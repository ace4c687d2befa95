"""plot sweep's band is mean ± 1 std (ddof 1) over the seeds, as spec-v2 fixes it, and says
so: "over 3 seeds" in the subtitle ("over 2–3 of 3 seeds" where runs have no value), and a
legend note when a band reaches below 0 while every run is >= 0 (a loss), where the band
would otherwise read as runs with a negative loss.
The band's edges are checked against numpy on the values written to results.csv."""
import csv

import numpy as np
import pytest
from sweep_fixture import LRS, SIGNS, write_sweep

from gradcli.plot.sweep import sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load

NOTE = "band below 0: mean − 1 std (every run ≥ 0)"


def signed_sweep(root, sign: float) -> list:
    """The fixture's sweep with final_loss made |value| * sign (a loss: every run >= 0, or
    every run <= 0); returns the rows with those values."""
    rows = write_sweep(root)
    for r in rows:
        r["values"]["final_loss"] = sign * abs(r["values"]["final_loss"])
    with open(root / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    for cells, r in zip(table, rows):
        if cells["final_loss"]:
            cells["final_loss"] = repr(r["values"]["final_loss"])
    with open(root / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return rows


def values(rows, lr, sign) -> np.ndarray:
    ys = np.array([r["values"]["final_loss"] for r in rows if not r["failed"]
                   and r["train.optimizer.lr"] == lr and r["override_map.sign"] == sign])
    return ys[np.isfinite(ys)]


def test_a_losss_band_below_0_is_numpys_mean_minus_std_and_the_legend_says_what_it_is(tmp_path):
    rows = signed_sweep(tmp_path / "sw", 1.0)
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", "final_loss",
                          "override_map.sign")
    (ax,) = sweep_figure("ste-lr", series).axes
    crossed = False
    for sign in SIGNS:
        want = [values(rows, lr, sign) for lr in LRS]
        lo = np.array([np.mean(w) - np.std(w, ddof=1) for w in want])
        hi = np.array([np.mean(w) + np.std(w, ddof=1) for w in want])
        line = next(li for li in series.lines if li.label == sign)
        lower, upper = series.band(line)
        np.testing.assert_allclose(lower, lo, rtol=1e-12, atol=1e-15)  # not clipped: numpy's
        np.testing.assert_allclose(upper, hi, rtol=1e-12, atol=1e-15)
        (band,) = [c for c in ax.collections if c.get_gid() == f"band:{sign}"]
        ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
        for edge in (*lo, *hi):  # the drawn band passes through mean ± std at every x
            assert np.min(np.abs(ys - edge)) < 1e-12
        crossed |= bool((lo < 0).any())
    assert crossed  # the fixture's small lr has a spread larger than its mean
    assert min(r["values"]["final_loss"] for r in rows if not r["failed"]
               and np.isfinite(r["values"]["final_loss"])) >= 0
    assert series.crosses_zero() == "below"
    # a failed (0005) and a diverged (0010) run leave 2 of the 3 seeds at their points
    counts = [len(values(rows, lr, sign)) for lr in LRS for sign in SIGNS]
    assert (min(counts), max(counts)) == (2, 3)
    assert ax.get_title() == ("final_loss against train.optimizer.lr: mean ± 1 std (ddof 1) "
                              "over 2–3 of 3 seeds")
    assert NOTE in [t.get_text() for t in ax.get_legend().get_texts()]


def test_every_run_at_most_0_and_a_band_above_it_is_said_too(tmp_path):
    signed_sweep(tmp_path / "sw", -1.0)
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", "final_loss",
                          "override_map.sign")
    assert series.crosses_zero() == "above"
    assert series.notes()[-1] == "band above 0: mean + 1 std (every run ≤ 0)"


@pytest.mark.parametrize("column", ["final_loss", "y/x.max_abs_diff"])
def test_no_note_where_runs_have_both_signs_or_no_band_passes_0(tmp_path, column):
    rows = write_sweep(tmp_path / "sw")  # final_loss has runs below 0; max_abs_diff in [0, 2)
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", column)
    ys = np.array([r["values"][column] for r in rows if not r["failed"]])
    ys = ys[np.isfinite(ys)]
    lows = [np.mean(w) - np.std(w, ddof=1) for w in (
        ys[[r["train.optimizer.lr"] == lr for r in rows if not r["failed"]
            and np.isfinite(r["values"][column])]] for lr in LRS)]
    assert (ys.min() < 0) or min(lows) >= 0  # the fixture is what the test says it is
    assert series.crosses_zero() is None and not any("band" in n for n in series.notes())
