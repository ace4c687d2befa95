"""plot sweep says when a line, or some of its points, lie under another's (tryout12 3.6:
identity and hardtanh identical at lr 0.003, the blue marker and band hidden under the
orange ones without a word), by plot train's rule for overlapping runs; and `--x seed`
draws points, not a line joining seeds as if they were ordered (tryout12 4)."""
import numpy as np
from sweep_fixture import SEEDS, write_sweep

from gradcli.plot.sweep import SweepLine, SweepSeries, sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load

X = np.array([0.003, 0.01, 0.03])


def series_of(means: dict, stds: dict | None = None, curve=False, categorical=False):
    lines = []
    for label, mean in means.items():
        std = (stds or {}).get(label, np.full(len(mean), 0.01))
        line = SweepLine(label, np.asarray(mean, float), np.asarray(std, float),
                         np.full(len(mean), 4), np.full(len(mean), 4))
        if curve:
            line.x = np.arange(len(mean), dtype=float)
        lines.append(line)
    positions = np.arange(3.0) if categorical else X
    return SweepSeries("train.optimizer.lr" if not curve else "step", "final.accuracy.test",
                       "override_map.round", ["0.003", "0.01", "0.03"], positions, categorical,
                       lines, pooled=["seed"], sizes={"seed": 4}, curve=curve)


def legend(fig) -> list:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_points_of_one_line_under_another_are_named_in_the_legend():
    series = series_of({"identity": [0.9104, 0.943, 0.957], "hardtanh": [0.9104, 0.939, 0.972],
                        "zero": [0.745, 0.84, 0.90]})
    shown = legend(sweep_figure("qat", series))
    assert shown[:3] == ["identity (n=4)", "hardtanh (n=4)", "zero (n=4)"]
    assert ("hardtanh lies on identity (mean and band) at train.optimizer.lr = 0.003"
            in shown)
    # a band that differs is not hidden: the same mean with another std is said nowhere
    series = series_of({"a": [1.0, 2.0, 3.0], "b": [1.0, 2.5, 3.5]},
                       {"a": np.full(3, 0.1), "b": np.full(3, 0.5)})
    assert not [t for t in legend(sweep_figure("t", series)) if "lies on" in t]


def test_a_line_under_another_everywhere_is_said_and_drawn_wider():
    series = series_of({"identity": [0.0, 0.0, 0.0], "hardtanh": [0.0, 0.0, 0.0],
                        "zero": [1.0, 1.0, 1.0]})
    fig = sweep_figure("cos", series)
    shown = legend(fig)
    assert shown[:3] == ["identity (n=4)", "hardtanh (n=4), overlaps identity", "zero (n=4)"]
    assert not [t for t in shown if "lies on" in t]
    width = {li.get_gid(): li.get_linewidth() for li in fig.axes[0].get_lines()}
    assert width["mean:identity"] > width["mean:hardtanh"] == width["mean:zero"]


def test_a_curve_says_at_how_many_steps_it_lies_on_another():
    series = series_of({"identity": [2.0, 1.5, 1.0, 0.5], "hardtanh": [2.0, 1.5, 1.2, 0.9]},
                       curve=True)
    assert "hardtanh lies on identity (mean and band) at 2 of 4 steps" in legend(
        sweep_figure("curves", series))


def test_side_by_side_categorical_points_hide_nothing():
    series = series_of({"a": [0.5, 0.6, 0.7], "b": [0.5, 0.6, 0.7]}, categorical=True)
    assert legend(sweep_figure("t", series))[:2] == ["a (n=4)", "b (n=4)"]


def test_seed_along_x_is_points_with_error_bars_not_a_line(tmp_path):
    write_sweep(tmp_path / "sw")
    series = sweep_series(load(tmp_path / "sw"), "seed", "final_loss", "override_map.sign")
    assert series.categorical and series.x_values == [str(s) for s in SEEDS]
    ax = sweep_figure("seeds", series).axes[0]
    joined = [li for li in ax.get_lines() if li.get_linestyle() != "None"
              and len(li.get_xdata()) > 2]  # error bars are two-point segments
    assert not joined
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(s) for s in SEEDS]


def test_without_a_band_the_note_names_the_mean_only():
    series = series_of({"0": [0.08, 0.06], "1": [0.08, 1.56]},
                       {"0": np.full(2, np.nan), "1": np.full(2, np.nan)})
    series.x_values, series.positions = ["0.01", "0.1"], np.array([0.01, 0.1])
    assert "1 lies on 0 at train.optimizer.lr = 0.01" in legend(sweep_figure("div", series))
