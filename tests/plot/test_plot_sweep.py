"""gradcli plot sweep: the means and ±1 std bands numpy gives on a hand-written sweep directory."""
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sweep_fixture import COLUMNS, DIVERGED, FAILED, LRS, SIGNS, write_sweep

from gradcli.cli import cli
from gradcli.plot import sweep as sweep_module
from gradcli.plot.sweep import sweep_figure, sweep_series
from gradcli.plot.sweep_dir import groups, load, run_doc
from gradcli.sweep import stats as sweep_stats


def gradient_stats(sweep, members):
    """The group's gradient statistics as `report DIR` computes them (sweep/stats.py)."""
    return sweep_stats.group_gradients([run_doc(sweep.path, m["run"]) for m in members])


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def expected(rows, x_key, x_value, column, hue_key=None, hue_value=None) -> np.ndarray:
    """The finite values of column over the runs that did not fail, straight from the fixture."""
    ys = np.array([r["values"][column] for r in rows if not r["failed"] and r[x_key] == x_value
                   and (hue_key is None or r[hue_key] == hue_value)])
    return ys[np.isfinite(ys)]


@pytest.fixture
def sweep_dir(tmp_path):
    rows = write_sweep(tmp_path / "sw")
    return tmp_path / "sw", rows


def test_means_and_stds_per_x_and_hue_are_numpys(sweep_dir):
    path, rows = sweep_dir
    series = sweep_series(load(path), "train.optimizer.lr", "final_loss", "override_map.sign")
    assert not series.categorical and series.x_values == LRS
    np.testing.assert_array_equal(series.positions, [0.01, 0.1, 1.0])
    assert [line.label for line in series.lines] == SIGNS
    for line, sign in zip(series.lines, SIGNS):
        want = [expected(rows, "train.optimizer.lr", lr, "final_loss", "override_map.sign", sign)
                for lr in LRS]
        np.testing.assert_allclose(line.mean, [np.mean(w) for w in want], rtol=1e-14)
        np.testing.assert_allclose(line.std, [np.std(w, ddof=1) for w in want], rtol=1e-12)
        np.testing.assert_array_equal(line.n, [len(w) for w in want])
    # run 0005 (lr 1.0, hardtanh) failed; run 0010 (lr 1.0, identity) diverged to NaN
    assert list(series.lines[0].n) == [3, 3, 2] and list(series.lines[1].n) == [3, 3, 2]
    assert series.failed == 1 and series.nonfinite == 1


def test_the_figure_draws_those_means_and_bands_with_group_sizes_in_the_legend(sweep_dir):
    path, rows = sweep_dir
    series = sweep_series(load(path), "train.optimizer.lr", "final_loss", "override_map.sign")
    fig = sweep_figure("ste-lr", series)
    (ax,) = fig.axes
    assert fig._suptitle.get_text() == "ste-lr"
    assert ax.get_xlabel() == "train.optimizer.lr (swept)" and ax.get_ylabel() == "final_loss"
    assert ax.get_xscale() == "log"  # 0.01 .. 1.0: two decades
    for sign in SIGNS:
        (line,) = [li for li in ax.get_lines() if li.get_gid() == f"mean:{sign}"]
        want = [expected(rows, "train.optimizer.lr", lr, "final_loss", "override_map.sign", sign)
                for lr in LRS]
        np.testing.assert_array_equal(line.get_xdata(), [0.01, 0.1, 1.0])
        np.testing.assert_allclose(line.get_ydata(), [np.mean(w) for w in want], rtol=1e-14)
        (band,) = [c for c in ax.collections if c.get_gid() == f"band:{sign}"]
        ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
        lo = [np.mean(w) - np.std(w, ddof=1) for w in want]
        hi = [np.mean(w) + np.std(w, ddof=1) for w in want]
        for bound in (*lo, *hi):  # the band's edges pass through mean ± std at every x
            assert np.min(np.abs(ys - bound)) < 1e-12
        assert ys.min() == pytest.approx(min(lo)) and ys.max() == pytest.approx(max(hi))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["identity (n=2–3)", "hardtanh (n=2–3)", "1 failed run left out",
                      "1 run without a finite final_loss left out"]
    assert ax.get_legend().get_title().get_text() == "override_map.sign"


def test_a_non_numeric_key_gets_a_categorical_axis(sweep_dir):
    path, rows = sweep_dir
    series = sweep_series(load(path), "override_map.sign", "final.accuracy.train", "train.optimizer.lr")
    assert series.categorical and series.x_values == SIGNS
    fig = sweep_figure("ste-lr", series)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == SIGNS
    assert ax.get_xscale() == "linear"
    for line, lr in zip(series.lines, LRS):
        want = [expected(rows, "override_map.sign", s, "final.accuracy.train",
                         "train.optimizer.lr", lr) for s in SIGNS]
        np.testing.assert_allclose(line.mean, [np.mean(w) for w in want], rtol=1e-14)
        np.testing.assert_allclose(line.std, [np.std(w, ddof=1) for w in want], rtol=1e-12)
        drawn = [li for li in ax.get_lines() if li.get_gid() == f"mean:{lr}"][0]
        assert np.all(np.abs(drawn.get_xdata() - [0, 1]) < 0.2)  # dodged, near its category


def test_without_hue_other_keys_are_pooled_and_said_so(sweep_dir):
    path, rows = sweep_dir
    series = sweep_series(load(path), "override_map.sign", "y/x.cosine")
    (line,) = series.lines
    for k, sign in enumerate(SIGNS):
        want = expected(rows, "override_map.sign", sign, "y/x.cosine")
        assert line.mean[k] == pytest.approx(np.mean(want), rel=1e-14)
        assert line.n[k] == len(want) == (9 if sign == "identity" else 8)
    # a gradient column also says when its gradients were taken (tryout12 3.5)
    assert series.notes() == ["1 failed run left out", "pooled over train.optimizer.lr",
                              "gradients at the inputs' initial values, before any training "
                              "step (on the first training batch when the spec has data:)"]


def test_a_failed_run_is_found_by_its_json_without_an_error_column(tmp_path):
    """A minimal sweep.json (no "keys"): the swept keys are told from results.csv's header."""
    write_sweep(tmp_path, error_column=False, gradcli_meta=False)
    sweep = load(tmp_path)
    assert sweep.name == "ste-lr"  # from the spec's text
    assert sweep.failed == {FAILED} and "error" not in sweep.columns
    assert sweep.columns == COLUMNS
    assert sweep.keys == ["seed", "train.optimizer.lr", "override_map.sign"]


def test_group_gradient_statistics_are_numpys(sweep_dir):
    path, rows = sweep_dir
    sweep = load(path)
    found = groups(sweep)
    assert len(found) == 6
    for params, members in found:
        mine = [r for r in rows if not r["failed"] and all(r[k] == v for k, v in params.items())]
        assert [r["run"] for r in mine] == [m["run"] for m in members]
        g, t = np.stack([r["over"] for r in mine]), np.stack([r["true"] for r in mine])
        gb, tb = g.mean(0), t.mean(0)
        stats = gradient_stats(sweep, members)["y"]["x"]
        assert stats["n"] == len(mine)
        assert stats["grad_mean_norm"] == pytest.approx(math.sqrt(np.sum(gb ** 2)), rel=1e-12)
        assert stats["grad_std"] == pytest.approx(
            math.sqrt(np.mean([np.sum((gi - gb) ** 2) for gi in g])), rel=1e-12)
        assert stats["bias"] == pytest.approx(math.sqrt(np.sum((gb - tb) ** 2)), rel=1e-12)
        assert stats["cosine_of_means"] == pytest.approx(
            np.sum(gb * tb) / math.sqrt(np.sum(gb ** 2) * np.sum(tb ** 2)), rel=1e-12)


def test_cosine_of_means_of_zero_gradients_follows_the_runs_convention():
    def _stats(pairs):
        return sweep_stats.gradient_stats([g for g, _ in pairs], [t for _, t in pairs])
    zero, one = np.zeros(2), np.array([1.0, 0.0])
    assert _stats([(zero, zero), (zero, zero)])["cosine_of_means"] == 1.0
    assert _stats([(zero, one), (zero, one)])["cosine_of_means"] == 0.0
    # the means cancel: g = ±1 has mean 0, so the cosine is 0 while grad_std is 1
    stats = _stats([(one, one), (-one, one)])
    assert stats["cosine_of_means"] == 0.0 and stats["grad_std"] == 1.0 and stats["bias"] == 1.0


def test_each_file_type_by_extension_and_the_default_name(sweep_dir, tmp_path, monkeypatch):
    path, _ = sweep_dir
    args = ["plot", "sweep", str(path), "--x", "train.optimizer.lr", "--y", "final_loss",
            "--hue", "override_map.sign"]
    for name in ("s.png", "s.svg", "s.pdf"):
        result = invoke(*args, "--output", str(tmp_path / name))
        assert result.exit_code == 0, result.stderr
    png = (tmp_path / "s.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1080, 690)
    assert ET.fromstring((tmp_path / "s.svg").read_bytes()).tag == "{http://www.w3.org/2000/svg}svg"
    assert (tmp_path / "s.pdf").read_bytes()[:5] == b"%PDF-"
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    assert invoke(*args).exit_code == 0
    assert [p.name for p in (tmp_path / "cwd").iterdir()] == ["ste-lr-sweep.png"]


def test_the_default_name_of_a_hostile_spec_name_stays_here(tmp_path, monkeypatch):
    write_sweep(tmp_path / "sw", name="../../<b>x")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    result = invoke("plot", "sweep", str(tmp_path / "sw"), "--x", "seed", "--y", "final_loss")
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in (tmp_path / "cwd").iterdir()] == ["b-x-sweep.png"]


@pytest.mark.parametrize("args, message", [
    (["--x", "train.optimizer.rl", "--y", "final_loss"],
     "--x 'train.optimizer.rl' is not a swept key of {dir} (did you mean 'train.optimizer.lr'?)"),
    (["--x", "seed", "--y", "final_los"],
     "--y 'final_los' is not a column of results.csv of {dir} (did you mean 'final_loss'?)"),
    (["--x", "seed", "--y", "final_loss", "--hue", "override_map.sing"],
     "--hue 'override_map.sing' is not a swept key of {dir} (did you mean 'override_map.sign'?)"),
    (["--x", "seed", "--y", "final_loss", "--hue", "seed"], "--hue 'seed' is also --x"),
])
def test_unknown_names_exit_2_with_a_suggestion(sweep_dir, tmp_path, args, message):
    path, _ = sweep_dir
    result = invoke("plot", "sweep", str(path), *args, "--output", str(tmp_path / "f.png"))
    assert result.exit_code == 2
    assert message.format(dir=path) in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr and not (tmp_path / "f.png").exists()


def test_a_directory_that_is_not_a_sweep_exits_2(tmp_path):
    def run(path):
        return invoke("plot", "sweep", str(path), "--x", "seed", "--y", "final_loss",
                      "--output", str(tmp_path / "f.png"))
    (tmp_path / "empty").mkdir()
    for path, says in ((tmp_path / "missing", "does not exist"),
                       (tmp_path / "empty", "not a sweep directory: it has no sweep.json")):
        result = run(path)
        assert result.exit_code == 2 and says in " ".join(result.stderr.split()), result.stderr
    (tmp_path / "empty" / "sweep.json").write_text(json.dumps({"grid": {}}))
    result = run(tmp_path / "empty")
    assert result.exit_code == 2 and "has no results.csv" in result.stderr
    (tmp_path / "empty" / "results.csv").write_text("seed,final_loss\n0,1.0\n")
    result = run(tmp_path / "empty")
    assert result.exit_code == 2 and "no `run` column" in result.stderr
    # run 1 failed with a NaN loss (a failed run that kept a finite value would be drawn,
    # as the sweep's report averages it)
    (tmp_path / "empty" / "results.csv").write_text("run,seed,final_loss,error\n0,0,,\n1,1,NaN,boom\n")
    result = run(tmp_path / "empty")
    assert result.exit_code == 2 and "nothing to draw: no run of" in result.stderr
    assert "has a finite final_loss (2 runs, 1 failed)" in " ".join(result.stderr.split())
    (tmp_path / "empty" / "sweep.json").write_text("{not json")
    result = run(tmp_path / "empty")
    assert result.exit_code == 2 and "not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "f.png").exists()


def test_sizes_say_a_range_only_when_groups_differ():
    assert sweep_module.sizes(np.array([3, 3])) == "n=3"
    assert sweep_module.sizes(np.array([3, 0, 2])) == "n=2–3"
    assert sweep_module.sizes(np.array([0])) == "no runs"


def test_a_diverged_run_alone_leaves_its_point_empty(sweep_dir):
    path, _ = sweep_dir
    series = sweep_series(load(path), "seed", "final_loss", "override_map.sign")
    assert DIVERGED  # run 0010 is seed 1, lr 1.0, identity: seed 1 identity has 2 finite values
    assert list(series.lines[0].n) == [3, 2, 3]


def test_output_may_not_replace_the_sweeps_own_files(sweep_dir, tmp_path):
    path, _ = sweep_dir
    before = (path / "sweep.json").read_bytes()
    (tmp_path / "link.png").symlink_to(path / "sweep.json")  # a .png name, the sweep's file
    result = invoke("plot", "sweep", str(path), "--x", "seed", "--y", "final_loss",
                    "--output", str(tmp_path / "link.png"))
    assert result.exit_code == 2 and "is the sweep.json of the sweep" in result.stderr
    assert (path / "sweep.json").read_bytes() == before


def test_the_bundled_sweep_behind_the_readme_figure(tmp_path):
    """docs/examples/ste-binary-weights-sweep (gradcli sweep's own output): the figure's lines
    are numpy's means over results.csv, and the results match the spec's grid."""
    import csv

    import yaml
    root = Path(__file__).parent.parent.parent / "docs" / "examples"
    grid = yaml.safe_load((root / "ste-binary-weights.yaml").read_text())["sweep"]
    with open(root / "ste-binary-weights-sweep" / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(grid["seed"]) * len(grid["train.optimizer.lr"]) * 2
    assert not any(r["error"] for r in table)
    series = sweep_series(load(root / "ste-binary-weights-sweep"), "train.optimizer.lr",
                          "final_loss", "override_map.Sign")
    np.testing.assert_array_equal(series.positions, grid["train.optimizer.lr"])
    for line, rule in zip(series.lines, grid["override_map.Sign"]):
        for k, lr in enumerate(grid["train.optimizer.lr"]):
            ys = [float(r["final_loss"]) for r in table
                  if float(r["train.optimizer.lr"]) == lr and r["override_map.Sign"] == rule]
            assert line.mean[k] == pytest.approx(np.mean(ys), rel=1e-14, abs=1e-15)
            assert line.std[k] == pytest.approx(np.std(ys, ddof=1), rel=1e-12, abs=1e-15)
    # what the README says: PassThrough reaches 0 at lr 1; QuantizeGrad stays where it stopped
    assert series.lines[1].mean[-1] == 0 and series.lines[0].mean[-1] > 0.5
    fig_path = tmp_path / "s.png"
    result = invoke("plot", "sweep", str(root / "ste-binary-weights-sweep"), "--x",
                    "train.optimizer.lr", "--y", "final_loss", "--hue", "override_map.Sign",
                    "--output", str(fig_path))
    assert result.exit_code == 0, result.stderr


def test_without_matplotlib_exit_2_with_the_pip_hint(sweep_dir, tmp_path, monkeypatch):
    import sys
    path, _ = sweep_dir
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    for args in (["plot", "sweep", str(path), "--x", "seed", "--y", "final_loss"],
                 ["report", str(path)]):
        result = invoke(*args, "--output", str(tmp_path / "f.png"))
        assert result.exit_code == 2, args
        assert "pip install 'gradcli[plot]'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "f.png").exists()


REAL = Path(__file__).parent / "data"


def test_a_directory_written_by_gradcli_sweep_gives_its_own_grouped_report():
    """tests/plot/data/sweep-real: `gradcli sweep ste-binary-weights-3-steps.yaml --param
    train.optimizer.lr=0.2,0.5 --seeds 3 --out sweep-real --format json` (sweep-real-report.json
    is its report): read back here, the groups, their columns and the gradient statistics are
    the sweep's own."""
    expected = json.loads((REAL / "sweep-real-report.json").read_text())["groups"]
    sweep = load(REAL / "sweep-real")
    assert sweep.name == "ste-binary-weights" and sweep.keys == [
        "seed", "train.optimizer.lr", "override_map.Sign"]
    found = groups(sweep)
    assert len(found) == len(expected) == 4
    from gradcli.plot.sweep_dir import number
    for (params, members), want in zip(found, expected):
        assert {k: str(v) for k, v in want["params"].items()} == params
        assert len(members) == want["n"]
        for column in sweep.columns:
            st = sweep_stats.column_stats([number(m.get(column)) for m in members])
            mean, std = st["mean"], st["std"]
            assert mean == pytest.approx(want["columns"][column]["mean"], rel=1e-12, abs=1e-15)
            assert std == pytest.approx(want["columns"][column]["std"], rel=1e-12, abs=1e-15)
        stats = gradient_stats(sweep, members)
        for out, per in want["gradients"].items():
            for name, values in per.items():
                for key, value in values.items():
                    assert stats[out][name][key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


def test_a_categorical_x_is_points_with_error_bars_never_a_line_or_band(sweep_dir):
    path, rows = sweep_dir
    series = sweep_series(load(path), "override_map.sign", "final_loss")
    (ax,) = sweep_figure("ste-lr", series).axes
    marked = [li for li in ax.get_lines() if li.get_gid() == "mean:mean"]
    assert marked and all(li.get_linestyle() == "None" for li in marked)  # no line, caps neither
    (drawn,) = [li for li in marked if li.get_marker() == "o"]
    want = [expected(rows, "override_map.sign", s, "final_loss") for s in SIGNS]
    np.testing.assert_allclose(drawn.get_ydata(), [np.mean(w) for w in want], rtol=1e-14)
    assert not [c for c in ax.collections if str(c.get_gid()).startswith("band:")]
    # the error bars are there: one vertical segment per category, mean ± std (ddof 1)
    bars = [c for c in ax.collections if c.get_segments() and len(c.get_segments()) == 2]
    ends = sorted(tuple(sorted(seg[:, 1])) for seg in bars[0].get_segments())
    assert ends == sorted((np.mean(w) - np.std(w, ddof=1), np.mean(w) + np.std(w, ddof=1))
                          for w in want)


def test_the_subtitle_says_what_a_point_pools_over_and_a_one_value_key_is_not_pooled(sweep_dir):
    path, rows = sweep_dir
    (ax,) = sweep_figure("s", sweep_series(load(path), "seed", "final_loss",
                                           "override_map.sign")).axes
    # the failed and the diverged run leave 2 of the 3 learning rates at their points
    counts = [sum(not r["failed"] and np.isfinite(r["values"]["final_loss"]) for r in rows
                  if r["seed"] == seed and r["override_map.sign"] == sign)
              for seed in ("0", "1", "2") for sign in SIGNS]
    assert (min(counts), max(counts)) == (2, 3)
    assert " ".join(ax.get_title().split()) == (
        "final_loss against seed: mean ± 1 std (ddof 1) over 2–3 of 3 values of "
        "train.optimizer.lr")
    sweep = load(path)
    sweep.rows = [r for r in sweep.rows if r["train.optimizer.lr"] == "0.1"]  # one lr only
    series = sweep_series(sweep, "override_map.sign", "final_loss")
    assert series.pooled == ["seed"] and not any("pooled" in n for n in series.notes())
    (ax,) = sweep_figure("s", series).axes
    assert ax.get_title().endswith("mean ± 1 std (ddof 1) over 3 seeds")
    assert not any("pooled" in t.get_text() for t in ax.get_legend().get_texts())
    sweep.rows = [r for r in sweep.rows if r["seed"] == "0"]
    assert sweep_series(sweep, "override_map.sign", "final_loss").over() == \
        "one run per point (nothing pooled)"


def test_with_one_run_per_point_the_subtitle_promises_no_band(sweep_dir):
    # --x seed with the other keys as hue: every point is one run, its std NaN (numpy's
    # std(ddof=1) of one number), so there is no band to speak of
    path, _ = sweep_dir
    sweep = load(path)
    sweep.rows = [r for r in sweep.rows if r["train.optimizer.lr"] == "0.1"]
    series = sweep_series(sweep, "seed", "final_loss", "override_map.sign")
    assert all(line.n.tolist() == [1] * len(line.n) and np.isnan(line.std).all()
               for line in series.lines)
    (ax,) = sweep_figure("s", series).axes
    assert ax.get_title() == "final_loss against seed: one run per point (no band: nothing pooled)"


def test_an_x_value_whose_runs_all_failed_takes_no_room_on_the_axis(sweep_dir):
    path, _ = sweep_dir
    sweep = load(path)
    for r in sweep.rows:  # every lr 1.0 run failed without a result
        if r["train.optimizer.lr"] == "1.0":
            sweep.failed.add(r["run"])
            for c in sweep.columns:
                r[c] = ""
    series = sweep_series(sweep, "train.optimizer.lr", "final_loss", "override_map.sign")
    assert series.x_values == ["0.01", "0.1"] and series.failed == 6
    (ax,) = sweep_figure("s", series).axes
    lo, hi = ax.get_xlim()
    assert 0.01 > lo > 0.001 and 0.1 < hi < 0.5


def test_a_point_resting_on_fewer_runs_than_ran_there_says_so(sweep_dir):
    # run 0010 (seed 1, lr 1.0, identity) diverged: lr 1.0's identity mean is over 2 of the 3
    # runs that ran there (run 0005 failed: no result, so not one that ran)
    path, rows = sweep_dir
    series = sweep_series(load(path), "train.optimizer.lr", "final_loss", "override_map.sign")
    ran = [[sum(1 for r in rows if not r["failed"] and r["train.optimizer.lr"] == lr
                and r["override_map.sign"] == sign) for lr in LRS] for sign in SIGNS]
    assert [list(line.runs) for line in series.lines] == ran == [[3, 3, 3], [3, 3, 2]]
    fig = sweep_figure("t", series)
    texts = {(t.get_gid(), t.get_text()) for t in fig.axes[0].texts}
    assert texts == {("fewer:identity", "n=2 of 3")}


def test_tick_labels_too_close_to_read_are_left_blank():
    x = np.array([-0.5, 0.0, 0.01, 0.1, 1.0])
    labels = sweep_module._spaced(x, ["-0.5", "0", "0.01", "0.1", "1"], log=False)
    assert labels == ["-0.5", "0", "", "0.1", "1"]  # 0.01 is 0.7% of the 1.5 span from 0
    logs = sweep_module._spaced(np.array([0.001, 0.01, 0.1]), ["0.001", "0.01", "0.1"], log=True)
    assert logs == ["0.001", "0.01", "0.1"]
