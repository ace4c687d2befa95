"""plot sweep --x step: a sweep's learning curves, mean ± 1 std (ddof 1) over seeds per step,
one line per --hue value, kept to one value of the other keys by --where.

What is expected is computed here with json and numpy from the run files the fixture wrote;
what is checked is read back from the drawn figure (the mean line's and the band's edge
lines' data), so a wrong number anywhere between the files and the pixels fails.
"""
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from curve_fixture import EVAL, LRS, SIGNS, STEPS, write_curves

import gradcli.plot.sweep as sweep_module
from gradcli.cli import cli
from gradcli.plot.sweep import sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load, parse_where


@pytest.fixture
def root(tmp_path):
    write_curves(tmp_path / "sw")
    return tmp_path / "sw"


def oracle(root, y, sign=None, lr=None):
    """{step: (mean, std ddof 1, n)} over the finite values the run files hold at each step,
    for the runs with that sign and lr (None: any)."""
    at: dict = {}
    for file in sorted((root / "runs").glob("*.json")):
        doc = json.loads(file.read_text())
        p = doc["params"]
        if "train" not in doc or (sign and p["override_map.sign"] != sign) or (
                lr and p["train.optimizer.lr"] != float(lr)):
            continue
        train = doc["train"]
        if y == "loss":
            pairs = enumerate(train["loss"])
        else:
            metric, part = y.split(".")
            pairs = zip(train["eval_steps"], train["metrics"][metric][part])
        for step, v in pairs:
            at.setdefault(step, []).append(float(v))
    out = {}
    for step, vs in sorted(at.items()):
        v = np.array(vs)
        v = v[np.isfinite(v)]
        out[step] = (v.mean() if v.size else math.nan,
                     v.std(ddof=1) if v.size > 1 else math.nan, v.size)
    return out


def drawn(ax, label):
    """(x, mean, lower edge, upper edge) of one line as the figure holds them."""
    (mean,) = [li for li in ax.get_lines() if li.get_gid() == f"mean:{label}"]
    lower, upper = [li for li in ax.get_lines() if li.get_gid() == f"band-edge:{label}"]
    return (np.asarray(mean.get_xdata(), float), np.asarray(mean.get_ydata(), float),
            np.asarray(lower.get_ydata(), float), np.asarray(upper.get_ydata(), float))


@pytest.mark.parametrize("lr", LRS)
def test_loss_curves_per_hue_at_one_lr_are_numpys_mean_and_std_per_step(root, lr):
    sweep = load(root)
    series = sweep_series(sweep, "step", "loss", "override_map.sign",
                          parse_where(sweep, [f"train.optimizer.lr={lr}"]))
    fig = sweep_figure("curves", series)
    (ax,) = fig.axes
    for sign in SIGNS:
        want = oracle(root, "loss", sign, lr)
        x, mean, lower, upper = drawn(ax, sign)
        np.testing.assert_array_equal(x, list(want))
        np.testing.assert_array_equal(x, np.arange(STEPS))
        m = np.array([w[0] for w in want.values()])
        s = np.array([w[1] for w in want.values()])
        np.testing.assert_allclose(mean, m, rtol=1e-13, atol=0)
        np.testing.assert_allclose(lower, m - s, rtol=1e-12, atol=1e-14, equal_nan=True)
        np.testing.assert_allclose(upper, m + s, rtol=1e-12, atol=1e-14, equal_nan=True)
        line = next(li for li in series.lines if li.label == sign)
        np.testing.assert_array_equal(line.n, [w[2] for w in want.values()])
    # the subtitle says what was kept fixed and what a point is over: the runs it really has
    # (2–3 where a run failed or stopped), of the 3 seeds planned
    title = " ".join(ax.get_title().split())
    counts = [w[2] for sign in SIGNS for w in oracle(root, "loss", sign, lr).values()]
    over = "3" if min(counts) == 3 else f"{min(counts)}–{max(counts)} of 3"
    assert title == (f"loss against training step at train.optimizer.lr = {lr}: "
                     f"mean ± 1 std (ddof 1) over {over} seeds")
    assert over == "2–3 of 3"  # each lr has a failed or a stopped run (curve_fixture)
    # one encoding of the spread: the band; no error bar repeats it (caps are "_" markers)
    assert not [li for li in ax.get_lines() if li.get_marker() == "_"]


def test_a_stopped_run_counts_up_to_its_end_and_a_failed_one_is_left_out_and_said(root):
    sweep = load(root)
    series = sweep_series(sweep, "step", "loss", "override_map.sign",
                          parse_where(sweep, ["train.optimizer.lr=0.1"]))
    hardtanh = next(li for li in series.lines if li.label == "hardtanh")
    # run 0003 (hardtanh, lr 0.1) has steps 0..5 and a NaN at 6: 3 runs, then 2 (one NaN), then 2
    assert list(hardtanh.n) == [3] * 6 + [2] * 6
    assert series.nonfinite == 1 and series.shorter == 1
    series = sweep_series(sweep, "step", "loss", "override_map.sign",
                          parse_where(sweep, ["train.optimizer.lr=0.01"]))
    hardtanh = next(li for li in series.lines if li.label == "hardtanh")
    assert list(hardtanh.n) == [2] * STEPS and series.failed == 1  # run 0006: an error
    notes = sweep_figure("curves", series).axes[0].get_legend().get_texts()
    assert "1 failed run left out" in [t.get_text() for t in notes]
    assert "hardtanh (n=2)" in [t.get_text() for t in notes]


def test_a_metrics_curve_sits_at_the_evaluation_steps_marked_and_clipped_to_0_1(root):
    sweep = load(root)
    series = sweep_series(sweep, "step", "accuracy.test", None, {})
    assert series.pooled == ["seed", "override_map.sign", "train.optimizer.lr"]
    assert series.bounds == (0.0, 1.0)
    fig = sweep_figure("curves", series)
    (ax,) = fig.axes
    want = oracle(root, "accuracy.test")
    x, mean, lower, upper = drawn(ax, "mean")
    np.testing.assert_array_equal(x, EVAL)
    m = np.array([w[0] for w in want.values()])
    s = np.array([w[1] for w in want.values()])
    np.testing.assert_allclose(mean, m, rtol=1e-13)
    np.testing.assert_allclose(lower, np.clip(m - s, 0, 1), rtol=1e-12)
    np.testing.assert_allclose(upper, np.clip(m + s, 0, 1), rtol=1e-12)
    (line,) = [li for li in ax.get_lines() if li.get_gid() == "mean:mean"]
    assert line.get_marker() not in ("None", None, "")  # 4 evaluation points, each marked
    assert "pooled over override_map.sign, train.optimizer.lr" in [
        t.get_text() for t in ax.get_legend().get_texts()]


def test_a_final_column_against_a_swept_key_with_where_is_over_those_runs_only(root):
    sweep = load(root)
    series = sweep_series(sweep, "train.optimizer.lr", "final.accuracy.test", None,
                          parse_where(sweep, ["override_map.sign=hardtanh"]))
    assert series.pooled == ["seed"] and series.fixed == {"override_map.sign": "hardtanh"}
    for k, lr in enumerate(LRS):
        v = []
        for file in sorted((root / "runs").glob("*.json")):
            doc = json.loads(file.read_text())
            p = doc["params"]
            if "train" in doc and p["override_map.sign"] == "hardtanh" and \
                    p["train.optimizer.lr"] == float(lr):
                v.append(doc["train"]["final"]["accuracy"]["test"])
        assert series.lines[0].mean[k] == pytest.approx(np.mean(v), rel=1e-14)
        assert series.lines[0].std[k] == pytest.approx(np.std(v, ddof=1), rel=1e-12)


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_the_command_with_hue_where_and_the_figure_words(root, tmp_path, monkeypatch):
    kept = {}

    def keep(title, series, text=None):
        kept["fig"] = fig = real(title, series, text)
        return fig
    real = sweep_module.sweep_figure
    monkeypatch.setattr(sweep_module, "sweep_figure", keep)
    out = tmp_path / "c.svg"
    result = invoke("plot", "sweep", str(root), "--x", "step", "--y", "loss", "--hue",
                    "override_map.sign", "--where", "train.optimizer.lr=0.010", "-o", str(out),
                    "--title", "Which estimator trains better", "--xlabel", "step",
                    "--ylabel", "training loss", "--legend-title", "estimator",
                    "--label", "identity=straight-through", "--label", "hardtanh=clipped STE")
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"<?xml")
    fig = kept["fig"]
    (ax,) = fig.axes
    assert fig._suptitle.get_text() == "Which estimator trains better"
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "training loss"
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "estimator"
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[:2] == ["straight-through (n=3)", "clipped STE (n=2)"]
    assert " ".join(ax.get_title().split()).startswith(
        "training loss against step at train.optimizer.lr = 0.01: mean ± 1 std")
    # the lines drawn are still numpy's numbers for lr 0.01
    want = oracle(root, "loss", "identity", "0.01")
    np.testing.assert_allclose(drawn(ax, "identity")[1], [w[0] for w in want.values()],
                               rtol=1e-13)


def test_empty_title_and_subtitle_leave_none(root, tmp_path, monkeypatch):
    kept = {}
    real = sweep_module.sweep_figure
    monkeypatch.setattr(sweep_module, "sweep_figure",
                        lambda t, s, text=None: kept.setdefault("fig", real(t, s, text)))
    result = invoke("plot", "sweep", str(root), "--x", "train.optimizer.lr", "--y",
                    "final_loss", "--title", "", "--subtitle", "", "-o", str(tmp_path / "a.png"))
    assert result.exit_code == 0, result.output
    fig = kept["fig"]
    assert fig._suptitle is None and fig.axes[0].get_title() == ""


@pytest.mark.parametrize("args, message", [
    (["--x", "step", "--y", "los"], "did you mean 'loss'"),
    (["--x", "step", "--y", "final_loss"], "choose from loss, accuracy.train, accuracy.test"),
    (["--x", "step", "--y", "loss", "--where", "train.optimizer.lr=0.5"],
     "train.optimizer.lr never takes the value '0.5'"),
    (["--x", "step", "--y", "loss", "--where", "train.optimizer.lr"], "expected KEY=VALUE"),
    (["--x", "step", "--y", "loss", "--where", "lr=0.1"], "--where 'lr' is not a swept key"),
    (["--x", "step", "--y", "loss", "--hue", "seed", "--where", "seed=1"], "also given to --where"),
    (["--x", "step", "--y", "loss", "--ylabel", "a", "--ylabel", "b"], "--ylabel given 2 times"),
    (["--x", "step", "--y", "loss", "--hue", "override_map.sign", "--label", "identiy=x"],
     "did you mean 'identity'"),
    (["--x", "step", "--y", "loss", "--label", "nothing"], "expected OLD=NEW"),
])
def test_bad_options_exit_2_with_a_sentence(root, tmp_path, args, message):
    result = invoke("plot", "sweep", str(root), *args, "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output and not (tmp_path / "x.png").exists()


def test_plot_train_given_a_sweep_directory_says_which_command_draws_its_curves(root, tmp_path):
    result = invoke("plot", "train", str(root), "-o", str(tmp_path / "t.png"))
    assert result.exit_code == 2
    assert "is a sweep directory" in result.output
    assert f"gradcli plot sweep {root} --x step --y loss" in " ".join(result.output.split())
