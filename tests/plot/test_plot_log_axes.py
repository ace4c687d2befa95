"""Every log axis gradcli draws has plain-text tick labels, stays inside float64's range on a
diverging run without a Python warning, and plot sweep goes log by plot train's rule
(tryout12 2.1, 3.1, 3.2).

Oracle: the losses of sgd written out in numpy here (lr as tf.train takes it, float32).
"""
import re
import warnings

import numpy as np
import pytest
from test_plot_figures import invoke
from test_report import images, write_report

import gradcli.plot.sweep as sweep_module
import gradcli.plot.train as train_module
from gradcli.plot.logaxis import power_text
from gradcli.plot.sweep import sweep_figure
from gradcli.plot.train import train_figure

LOGSPAN = """name: logspan
inputs: {w: [10.0, -8.0]}
outputs: {loss: sum(w * w)}
train: {optimizer: {name: sgd, lr: 0.1}, steps: 40}
"""
# w * w with w <- w - 5.5 * 2w = -10 w: the loss grows 100-fold a step, past 1e308 to inf
DIVERGE = """name: updiv
inputs: {w: 1.0}
outputs: {loss: w * w}
train: {optimizer: {name: sgd, lr: 5.5}, steps: 200}
"""
SWEEP_DIVERGE = DIVERGE + "sweep: {inputs.w: [1.0, 2.0], train.optimizer.lr: [0.1, 5.5]}\n"
SWEEP_LR = LOGSPAN + "sweep: {train.optimizer.lr: [0.001, 0.01, 0.1]}\n"
MATH = re.compile(r"\$|mathdefault|\\")


def sgd_losses(w, lr: float, steps: int) -> list:
    """sum(w * w) before each step of sgd (lr as float32) until the first non-finite loss."""
    w, lr, losses = np.atleast_1d(np.asarray(w, dtype=np.float64)), float(np.float32(lr)), []
    with np.errstate(over="ignore"):
        for _ in range(steps):
            losses.append(float(np.sum(w * w)))
            if not np.isfinite(losses[-1]):
                break
            w = w - lr * 2 * w
    return losses


def captured(monkeypatch, module, name):
    drawn = {}
    original = getattr(module, name)

    def keep(*args, **kwargs):
        drawn["fig"] = fig = original(*args, **kwargs)
        return fig
    monkeypatch.setattr(module, name, keep)
    return drawn


def labels(axis) -> list:
    """The tick labels an axis shows (drawn first: a formatter writes them at draw time)."""
    axis.figure.canvas.draw()
    lo, hi = sorted(axis.get_view_interval())
    return [t.get_text() for t in axis.get_ticklabels() + axis.get_ticklabels(minor=True)
            if t.get_text() and lo <= t.get_position()[axis.axis_name == "y"] <= hi]


def runtime_warnings(recwarn) -> list:
    return [str(w.message) + f" ({w.filename}:{w.lineno})" for w in recwarn
            if issubclass(w.category, RuntimeWarning)]


def test_power_text_writes_plain_superscripts():
    assert [power_text(v) for v in (1e-2, 1.0, 10.0, 1e-5, 1e300, 2e-2, 3e5, 0.001)] == [
        "10⁻²", "10⁰", "10¹", "10⁻⁵", "10³⁰⁰", "2×10⁻²", "3×10⁵", "10⁻³"]


def test_plot_train_log_axis_is_labelled_in_plain_text(tmp_path, monkeypatch):
    (tmp_path / "logspan.yaml").write_text(LOGSPAN)
    drawn = captured(monkeypatch, train_module, "train_figure")
    result = invoke("plot", "train", str(tmp_path / "logspan.yaml"), "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    (ax,) = drawn["fig"].axes
    assert ax.get_yscale() == "log"
    losses = sgd_losses([10.0, -8.0], 0.1, 40)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), losses, rtol=1e-12)
    shown = labels(ax.yaxis)
    assert not [t for t in shown if MATH.search(t)], shown
    # a label at each decade the losses (164 down to 4.5e-6, final 2.9e-6) reach
    low, high = np.floor(np.log10(min(losses) * 0.64)), np.floor(np.log10(max(losses)))
    assert shown == [power_text(10.0 ** k) for k in range(int(low) + 1, int(high) + 1)]


def test_the_reports_svg_figures_have_no_mathtext(tmp_path):
    (tmp_path / "logspan.yaml").write_text(LOGSPAN)
    code, err, page = write_report(tmp_path, tmp_path / "logspan.yaml")
    assert code == 0, err
    svgs = [svg.decode() for svg in images(page)]
    assert svgs and not [svg for svg in svgs if "mathdefault" in svg or "$" in svg]
    assert any("<!-- 10⁻² -->" in svg for svg in svgs)  # the tick label's text, as drawn


def test_a_diverging_run_has_a_log_axis_up_to_1e300_and_no_warning(tmp_path, monkeypatch,
                                                                   recwarn):
    warnings.simplefilter("always")
    (tmp_path / "updiv.yaml").write_text(DIVERGE)
    drawn = captured(monkeypatch, train_module, "train_figure")
    result = invoke("plot", "train", str(tmp_path / "updiv.yaml"), "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    assert not runtime_warnings(recwarn)
    (ax,) = drawn["fig"].axes
    losses = np.array(sgd_losses(1.0, 5.5, 200))
    assert np.isposinf(losses[-1]) and losses[-2] > 1e307  # 1e308, then inf at step 155
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), losses, rtol=1e-9)
    lo, hi = ax.get_ylim()
    assert ax.get_yscale() == "log" and 0 < lo < 1 and np.isfinite(hi) and hi > 1e307
    shown = labels(ax.yaxis)
    assert not [t for t in shown if MATH.search(t)], shown
    # ticks along the whole axis, at round decades: not one label at the bottom
    assert shown == ["10⁰", "10⁵⁰", "10¹⁰⁰", "10¹⁵⁰", "10²⁰⁰", "10²⁵⁰"]


def make_sweep(tmp_path, text: str, code: int = 0):
    (tmp_path / "s.yaml").write_text(text)
    result = invoke("sweep", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "sw"))
    assert result.exit_code == code, result.output  # 1: a run stopped on a non-finite loss
    return tmp_path / "sw"


def test_plot_sweep_learning_curves_of_a_diverging_sweep_go_log(tmp_path, monkeypatch, recwarn):
    warnings.simplefilter("always")
    root = make_sweep(tmp_path, SWEEP_DIVERGE, code=1)
    drawn = captured(monkeypatch, sweep_module, "sweep_figure")
    result = invoke("plot", "sweep", str(root), "--x", "step", "--y", "loss",
                    "--hue", "train.optimizer.lr", "-o", str(tmp_path / "c.png"))
    assert result.exit_code == 0, result.output
    assert not runtime_warnings(recwarn)
    (ax,) = drawn["fig"].axes
    assert ax.get_yscale() == "log"
    lo, hi = ax.get_ylim()
    assert 0 < lo < 1e-30 and 1e306 < hi <= np.finfo(np.float64).max
    for lr in (0.1, 5.5):
        runs = [sgd_losses(w, lr, 200) for w in (1.0, 2.0)]
        steps = max(map(len, runs))
        at = [np.array([r[k] for r in runs if k < len(r) and np.isfinite(r[k])])
              for k in range(steps)]
        (mean,) = [li for li in ax.get_lines() if li.get_gid() == f"mean:{lr}"]
        np.testing.assert_allclose(mean.get_ydata(), [v.mean() for v in at], rtol=1e-9)
    shown = labels(ax.yaxis)
    assert not [t for t in shown if MATH.search(t)], shown
    assert "10³⁰⁰" in shown or "10²⁵⁰" in shown


def test_plot_sweep_final_losses_over_five_decades_go_log(tmp_path, monkeypatch):
    root = make_sweep(tmp_path, SWEEP_LR)
    drawn = captured(monkeypatch, sweep_module, "sweep_figure")
    result = invoke("plot", "sweep", str(root), "--x", "train.optimizer.lr", "--y", "final_loss",
                    "-o", str(tmp_path / "f.png"))
    assert result.exit_code == 0, result.output
    (ax,) = drawn["fig"].axes
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    finals = []
    for lr in (0.001, 0.01, 0.1):
        w = np.array([10.0, -8.0])
        for _ in range(40):
            w = w - float(np.float32(lr)) * 2 * w
        finals.append(float(np.sum(w * w)))
    assert finals[0] > 100 and finals[-1] < 1e-5  # 140 down to 3e-6: seven decades
    (mean,) = [li for li in ax.get_lines() if li.get_gid() == "mean:mean"]
    np.testing.assert_allclose(mean.get_ydata(), finals, rtol=1e-9)
    for axis in (ax.xaxis, ax.yaxis):
        shown = labels(axis)
        assert shown and not [t for t in shown if MATH.search(t)], shown


@pytest.mark.parametrize("values, scale", [([0.5, 0.9, 0.7], "linear"), ([1e-4, 0.9, 0.2], "log")])
def test_plot_sweep_goes_log_above_two_decades_as_plot_train(values, scale):
    from gradcli.plot.sweep import SweepLine, SweepSeries
    x = np.array([1.0, 2.0, 3.0])
    series = SweepSeries("k", "final_loss", None, ["1", "2", "3"], x, False,
                         [SweepLine("mean", np.array(values), np.full(3, np.nan), np.ones(3, int))])
    fig = sweep_figure("t", series)
    assert fig.axes[0].get_yscale() == scale
    assert series.log_y() == (scale == "log")
    assert not [t for t in labels(fig.axes[0].yaxis) if MATH.search(t)]


def test_a_log_x_axis_of_many_swept_values_is_plain_text_too():
    from gradcli.plot.sweep import SweepLine, SweepSeries
    x = np.geomspace(1e-4, 1.0, 13)   # more than 12 values: matplotlib's own ticks
    series = SweepSeries("lr", "final_loss", None, [f"{v:g}" for v in x], x, False,
                         [SweepLine("mean", np.linspace(1, 2, 13), np.full(13, np.nan),
                                    np.ones(13, int))])
    ax = sweep_figure("t", series).axes[0]
    assert ax.get_xscale() == "log"
    shown = labels(ax.xaxis)
    assert shown and not [t for t in shown if MATH.search(t)], shown


def test_train_figure_of_losses_near_float64s_max_warns_nothing(recwarn):
    warnings.simplefilter("always")
    losses = [0.3, *[10.0 ** k for k in range(1, 308)], 1.7e308, np.inf]
    fig = train_figure("t", [("run", {"loss": {"train": losses}})])
    fig.canvas.draw()
    assert not runtime_warnings(recwarn)
    assert np.isfinite(fig.axes[0].get_ylim()).all()


def test_a_band_below_0_or_past_1e308_on_a_log_axis(recwarn):
    """mean − std < 0 is filled to the axis' bottom, its edge line stops, the legend says so;
    mean + std past float64's max (1e308 + 1e308) is drawn at the max, without a warning."""
    from gradcli.plot.sweep import SweepLine, SweepSeries
    warnings.simplefilter("always")
    mean, std = np.array([1e-3, 1.0, 1e308]), np.array([2e-3, 0.5, 1e308])
    series = SweepSeries("k", "final_loss", None, ["1", "2", "3"], np.array([1.0, 2.0, 3.0]),
                         False, [SweepLine("mean", mean, std, np.full(3, 4))],
                         pooled=["seed"], sizes={"seed": 4}, observed=(1e-4, 1.5e308))
    ax = sweep_figure("t", series).axes[0]
    ax.figure.canvas.draw()
    assert not runtime_warnings(recwarn)
    assert ax.get_yscale() == "log"
    lower, upper = [li for li in ax.get_lines() if li.get_gid() == "band-edge:mean"]
    np.testing.assert_array_equal(lower.get_ydata(), [np.nan, 0.5, np.nan])  # 1e308 − 1e308 = 0
    np.testing.assert_array_equal(upper.get_ydata(), [3e-3, 1.5, np.finfo(np.float64).max])
    notes = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "band below 0: mean − 1 std (every run ≥ 0); filled down to the log axis' bottom" in notes


def test_lines_spanning_float64s_range_are_not_said_to_overlap(recwarn):
    """The overlap tolerance is a share of the axes' span: -1.7e308 .. 1.7e308 overflowed to
    inf, and every line then "overlapped" every other (with a warning)."""
    from gradcli.plot.marks import limits
    from gradcli.plot.train import overlaps
    warnings.simplefilter("always")
    under, depth = overlaps([("a", np.array([-1.7e308, 1.7e308])), ("b", np.array([0.0, 1.0]))])
    assert under == [None, None] and depth == [0, 0]
    lo, hi = limits([[-1.7e308, 1.7e308]])
    assert lo == -np.finfo(np.float64).max and hi == np.finfo(np.float64).max
    assert not runtime_warnings(recwarn)


def test_the_user_sees_no_warning_on_stderr(tmp_path):
    """The try-out's own symptom: `gradcli plot train` of a diverging run printed
    RuntimeWarnings with source paths (marks.py, matplotlib's scale.py) on stderr."""
    import os
    import subprocess
    import sys
    (tmp_path / "updiv.yaml").write_text(DIVERGE)
    done = subprocess.run([sys.executable, "-m", "gradcli", "plot", "train", "updiv.yaml",
                           "-o", "x.png"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "default"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
