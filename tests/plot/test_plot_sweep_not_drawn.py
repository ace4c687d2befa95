"""An x value none of whose runs has a finite y takes no room on the axis, and the legend (and
the report's caption) names it with its counts (tryout10 F7): a sweep of three learning rates
must not read as a sweep of two. The counts are taken from the fixture's rows here."""
import csv

from sweep_fixture import LRS, SIGNS, write_sweep

from gradcli.plot.sweep import sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load


def diverge_at(path, column: str, key: str, value: str) -> None:
    """Make every run with `key` = `value` end with a NaN `column` (those that have a result)."""
    with open(path / "results.csv", newline="") as f:
        rows = list(csv.reader(f))
    at, col = rows[0].index(key), rows[0].index(column)
    for row in rows[1:]:
        if row[at] == value and row[col] != "":
            row[col] = "nan"
    with open(path / "results.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)


def legend(series) -> list:
    (ax,) = sweep_figure("ste-lr", series).axes
    return ax, [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_learning_rate_whose_runs_all_diverged_is_named_in_the_legend(tmp_path):
    rows = write_sweep(tmp_path / "sw")
    diverge_at(tmp_path / "sw", "final_loss", "train.optimizer.lr", "1.0")
    at = [r for r in rows if r["train.optimizer.lr"] == "1.0"]
    failed = sum(r["failed"] for r in at)
    assert (len(at), failed) == (6, 1)  # 3 seeds x 2 signs; run 0005 failed
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", "final_loss",
                          "override_map.sign")
    assert series.x_values == LRS[:2]
    ax, texts = legend(series)
    assert [float(t) for t in ax.get_xticks()] == [0.01, 0.1]
    # every run left out is said once: the failed run and the diverged ones are all at lr 1.0
    assert texts == ["identity (n=3)", "hardtanh (n=3)",
                     "train.optimizer.lr = 1.0 not drawn: 6 runs: 1 failed, 5 without a "
                     "finite final_loss"]


def test_the_counts_say_of_how_many_and_other_left_out_runs_stay_counted(tmp_path):
    rows = write_sweep(tmp_path / "sw")
    diverge_at(tmp_path / "sw", "final.accuracy.test", "override_map.sign", "hardtanh")
    at = [r for r in rows if r["override_map.sign"] == "hardtanh" and not r["failed"]]
    series = sweep_series(load(tmp_path / "sw"), "override_map.sign", "final.accuracy.test")
    assert series.x_values == SIGNS[:1] and series.categorical
    _, texts = legend(series)
    # run 0005 (hardtanh) failed; the hardtanh runs with a result are 8 of the 9
    assert texts == ["mean (n=9)", f"override_map.sign = hardtanh not drawn: 9 runs: 1 failed, "
                                   f"{len(at)} without a finite final.accuracy.test",
                     "pooled over train.optimizer.lr"]
    diverge_at(tmp_path / "sw", "final_loss", "override_map.sign", "hardtanh")
    series = sweep_series(load(tmp_path / "sw"), "override_map.sign", "final_loss")
    # run 0010 (identity, diverged) stays a run left out at a drawn value
    assert series.notes() == ["override_map.sign = hardtanh not drawn: 9 runs: 1 failed, "
                              "8 without a finite final_loss",
                              "1 run without a finite final_loss left out",
                              "pooled over train.optimizer.lr"]


def test_no_note_when_every_x_value_is_drawn(tmp_path):
    write_sweep(tmp_path / "sw")
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", "final_loss",
                          "override_map.sign")
    assert series.dropped == [] and not any("not drawn" in n for n in series.notes())


def test_more_than_three_values_not_drawn_are_said_in_one_note(tmp_path):
    from gradcli.plot.sweep_notes import notes
    write_sweep(tmp_path / "sw")
    series = sweep_series(load(tmp_path / "sw"), "train.optimizer.lr", "final_loss")
    series.dropped = [("10", 3, 0), ("100", 3, 3), ("1000", 3, 1), ("1e4", 2, 0)]
    series.failed, series.nonfinite = 4 + 1, 7 + 1  # the fixture's failed and diverged runs
    assert notes(series)[:3] == [
        "train.optimizer.lr = 10, 100, 1000, … (4 values) not drawn: 11 runs: 4 failed, 7 "
        "without a finite final_loss", "1 failed run left out",
        "1 run without a finite final_loss left out"]
    series.dropped, series.failed, series.nonfinite = [("100", 3, 3)], 3, 0
    assert notes(series)[0] == "train.optimizer.lr = 100 not drawn: 3 of 3 runs failed"
    series.dropped, series.failed, series.nonfinite = [("100", 3, 0)], 0, 3
    assert notes(series)[0] == ("train.optimizer.lr = 100 not drawn: 3 of 3 runs without a "
                                "finite final_loss")
