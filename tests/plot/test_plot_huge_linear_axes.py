"""A linear y axis with values near ±1.7e308 is drawn (in units of 10^p, said by the axis and
the legend), where every figure ended in `internal error: ValueError: arange: cannot compute
length` (matplotlib's linear locator) or `Axis limits cannot be NaN or Inf` (its margins):
a training loss driven to -1.7e308 (not all positive: no log axis), 0 and 1.7e308 on one
axis, a plot curve's output or gradient, a sweep's final loss and its learning curves, the
report. No warning reaches the user's stderr.

Oracle: the losses of sgd on -w * w written out in numpy here (w <- w + 2 lr w, lr 1.0 and
0.5 exact in float32), -exp(709.7 x) in numpy; the values given to the figure functions.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from test_plot_figures import invoke
from test_plot_log_axes import captured, labels, runtime_warnings
from test_report import write_report

import gradcli.plot.curve as curve_module
import gradcli.plot.sweep as sweep_module
import gradcli.plot.train as train_module
from gradcli.curve import Curve
from gradcli.plot import figure_bytes
from gradcli.plot.bigaxis import power
from gradcli.plot.curve import curve_figure
from gradcli.plot.train import train_figure

INF = float("inf")
# w <- w - lr * (-2 w) = 3 w at lr 1: the loss -w² grows 9-fold a step, to -1.6e308 at
# step 3 and -inf at step 4 (where training stops)
W0 = 4.685e152
NEG = f"""name: negdiv
inputs: {{w: [{W0!r}]}}
outputs: {{loss: sum(-w * w)}}
train: {{loss: loss, optimizer: {{name: sgd, lr: 1.0}}, steps: STEPS}}
"""
SWEEP = "sweep: {train.optimizer.lr: [0.5, 1.0], seed: [0, 1]}\n"
CURVE = """name: bigcurve
inputs: {x: [1.0]}
outputs: {y: sum(-exp(x * 709.7))}
"""
UNIT = "×10³⁰⁸"
NOTE = "y axis in units of 10³⁰⁸"


def sgd_losses(lr: float, steps: int) -> list:
    """-w² before each step of sgd from W0 until the first non-finite loss (then stopped)."""
    w, losses = np.float64(W0), []
    with np.errstate(over="ignore"):
        for _ in range(steps):
            losses.append(float(-w * w))
            if not np.isfinite(losses[-1]):
                break
            w = w + lr * 2 * w
    return losses


def final_loss(lr: float, steps: int) -> float:
    w = W0 * (1 + 2 * lr) ** steps
    with np.errstate(over="ignore"):
        return float(-np.float64(w) * w)


def png(fig) -> bytes:
    data = figure_bytes(fig, "png")
    assert data.startswith(b"\x89PNG")
    return data


def legend_texts(ax) -> list:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def drawn_values(ax) -> np.ndarray:
    """The first line's y values as the figure means them (the axis in units of 10³⁰⁸), but
    the NaN a curve's line has inserted at each jump (left undrawn)."""
    y = np.asarray(ax.get_lines()[0].get_ydata(), dtype=np.float64) * 1e308
    return y[~np.isnan(y)]


def user_run(tmp_path, *args):
    """gradcli as the user runs it, Python's warnings shown: (exit code, stderr)."""
    done = subprocess.run([sys.executable, "-m", "gradcli", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONWARNINGS": "default"})
    return done.returncode, done.stderr


def test_power_is_the_largest_values_power_of_ten_from_1e300():
    assert power([-1.7e308, -1.0]) == 308 and power([0.0, 1.7e308, INF]) == 308
    assert power([1e300, -2.0]) == 300 and power([-9.9e299, 1.0]) is None
    assert power([INF, -INF, np.nan]) is None and power([]) is None


@pytest.mark.parametrize("loss", [[-1.7e308, -1.0], [0.0, 1.7e308], [-1.7e308, 1.7e308],
                                  [-1.0, -1e300, -1.7e308, -INF],
                                  [-1.7e308, 1.7e308, np.nan, INF, -INF]])
def test_train_figure_of_a_loss_near_float64s_max_renders(loss, recwarn):
    warnings.simplefilter("always")
    fig = train_figure("t", [("r", {"loss": {"train": loss}})])
    (ax,) = fig.axes
    assert ax.get_yscale() == "linear"
    y = np.asarray(loss)
    drawn = np.asarray(ax.get_lines()[0].get_ydata(), dtype=np.float64) * 1e308
    finite = np.isfinite(y)
    np.testing.assert_allclose(drawn[finite], y[finite], rtol=1e-12)  # every value, in place
    lo, hi = ax.get_ylim()
    assert lo <= y[finite].min() / 1e308 and y[finite].max() / 1e308 <= hi
    shown = labels(ax.yaxis)
    assert len(shown) >= 3, shown  # ticks along the axis, not one label
    assert ax.yaxis.get_major_formatter().get_offset() == UNIT
    assert any(t.startswith(NOTE) for t in legend_texts(ax))
    png(fig)
    assert not runtime_warnings(recwarn)


def test_train_figure_below_1e300_is_unchanged():
    fig = train_figure("t", [("r", {"loss": {"train": [-1e299, -1.0]}})])
    (ax,) = fig.axes
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [-1e299, -1.0])
    assert not any(t.startswith(NOTE) for t in legend_texts(ax))
    png(fig)


def test_plot_train_of_a_loss_to_minus_1e308_is_drawn(tmp_path, monkeypatch):
    (tmp_path / "neg.yaml").write_text(NEG.replace("STEPS", "8"))
    drawn = captured(monkeypatch, train_module, "train_figure")
    result = invoke("plot", "train", str(tmp_path / "neg.yaml"), "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")
    (ax,) = drawn["fig"].axes
    losses = np.array(sgd_losses(1.0, 8))
    assert losses[-2] < -1.5e308 and np.isneginf(losses[-1])  # -1.6e308, then -inf at step 4
    np.testing.assert_allclose(drawn_values(ax)[:-1], losses[:-1], rtol=1e-12)
    assert any(t.startswith(NOTE) for t in legend_texts(ax))
    assert "negdiv: -inf" in "\n".join(legend_texts(ax))  # the -inf in its lane, as before


def test_plot_train_as_the_user_runs_it_ends_well_with_nothing_on_stderr(tmp_path):
    (tmp_path / "neg.yaml").write_text(NEG.replace("STEPS", "8"))
    code, err = user_run(tmp_path, "plot", "train", "neg.yaml", "-o", "x.png")
    assert (code, err) == (0, "")
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")


def make_sweep(tmp_path, steps: int):
    (tmp_path / "s.yaml").write_text(NEG.replace("STEPS", str(steps)) + SWEEP)
    result = invoke("sweep", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "sw"))
    assert result.exit_code == 0, result.output
    return tmp_path / "sw"


def test_plot_sweep_of_final_losses_to_minus_1e308_is_drawn(tmp_path, monkeypatch):
    root = make_sweep(tmp_path, 3)  # final loss after 3 steps: -1.6e308 at lr 1.0
    drawn = captured(monkeypatch, sweep_module, "sweep_figure")
    result = invoke("plot", "sweep", str(root), "--x", "train.optimizer.lr", "--y", "final_loss",
                    "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    (ax,) = drawn["fig"].axes
    means = [final_loss(0.5, 3), final_loss(1.0, 3)]
    assert means[1] < -1.5e308
    np.testing.assert_allclose(drawn_values(ax), means, rtol=1e-12)
    assert ax.yaxis.get_major_formatter().get_offset() == UNIT
    assert any(t.startswith(NOTE) for t in legend_texts(ax))
    code, err = user_run(tmp_path, "plot", "sweep", "sw", "--x", "train.optimizer.lr", "--y",
                         "final_loss", "-o", "y.png")
    assert (code, err) == (0, "")


def test_plot_sweep_learning_curves_to_minus_1e308_are_drawn(tmp_path, monkeypatch):
    root = make_sweep(tmp_path, 4)  # losses before each of 4 steps: -1.6e308 at step 3
    drawn = captured(monkeypatch, sweep_module, "sweep_figure")
    result = invoke("plot", "sweep", str(root), "--x", "step", "--y", "loss", "--hue",
                    "train.optimizer.lr", "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    (ax,) = drawn["fig"].axes
    means = {str(line.get_gid()): np.asarray(line.get_ydata()) * 1e308 for line in ax.get_lines()
             if str(line.get_gid()).startswith("mean:")}
    for lr in (0.5, 1.0):
        np.testing.assert_allclose(means[f"mean:{lr}"], sgd_losses(lr, 4), rtol=1e-12)
    assert any(t.startswith(NOTE) for t in legend_texts(ax))
    code, err = user_run(tmp_path, "plot", "sweep", "sw", "--x", "step", "--y", "loss",
                         "-o", "y.png")
    assert (code, err) == (0, "")


def test_curve_figure_of_values_near_float64s_max_renders(recwarn):
    warnings.simplefilter("always")
    x = np.linspace(0.0, 1.0, 5)
    grad = np.array([0.0, 1.7e308, INF, -1.7e308, 1.0])
    fig = curve_figure(Curve("c", "numpy", "y", "x", "", x, np.array([-1.7e308, -1.0, -2.0, -3.0, 1.0]),
                             grad, grad / 2, grad))
    top, bottom = fig.axes
    np.testing.assert_allclose(drawn_values(top), [-1.7e308, -1.0, -2.0, -3.0, 1.0], rtol=1e-12,
                               atol=1e-300)
    for ax in (top, bottom):
        assert ax.yaxis.get_major_formatter().get_offset() == UNIT
        assert any(t.startswith(NOTE) for t in legend_texts(ax))
    png(fig)
    assert not runtime_warnings(recwarn)


def test_plot_curve_and_the_report_of_values_near_float64s_max_are_drawn(tmp_path, monkeypatch):
    (tmp_path / "curve.yaml").write_text(CURVE)
    drawn = captured(monkeypatch, curve_module, "curve_figure")
    result = invoke("plot", "curve", str(tmp_path / "curve.yaml"), "--range", "0:1",
                    "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    top = drawn["fig"].axes[0]
    x = np.linspace(0.0, 1.0, 401)
    forward = -np.exp(709.7 * x)
    assert forward.min() < -1.6e308
    np.testing.assert_allclose(drawn_values(top), forward, rtol=1e-12)
    code, err = user_run(tmp_path, "plot", "curve", "curve.yaml", "--range", "0:1", "-o", "y.png")
    assert (code, err) == (0, "")
    (tmp_path / "neg.yaml").write_text(NEG.replace("STEPS", "8"))
    code, err, page = write_report(tmp_path, tmp_path / "neg.yaml", tmp_path / "curve.yaml")
    assert code == 0, err
    assert "internal error" not in err and page.count("<img") >= 2


LINE = """name: line
inputs: {x: [1.0]}
outputs: {y: sum(x * 2.0)}
"""
HALF = """name: half
inputs: {x: [-1.0e308, 1.0e308]}
outputs: {y: sum(x * 0.5)}
"""


@pytest.mark.parametrize("spec, args, lo, hi", [
    (LINE, ["--range", "-1.7e308:1.7e308"], -1.7e308, 1.7e308),  # linspace's step was inf
    (LINE, ["--range", "0:1.7e308"], 0.0, 1.7e308),               # limits NaN or inf
    (HALF, [], -1.5e308, 1.5e308)],  # the default range widened: inf ends, every x NaN
    ids=["range-both-signs", "range-0-to-max", "default-range"])
def test_plot_curve_along_an_input_near_float64s_max_is_drawn(tmp_path, monkeypatch, spec, args,
                                                               lo, hi):
    (tmp_path / "s.yaml").write_text(spec)
    drawn = captured(monkeypatch, curve_module, "curve_figure")
    result = invoke("plot", "curve", str(tmp_path / "s.yaml"), *args, "-o", str(tmp_path / "x.png"))
    assert result.exit_code == 0, result.output
    top, bottom = drawn["fig"].axes
    x = np.asarray(top.get_lines()[0].get_xdata(), dtype=np.float64) * 1e308
    assert len(x) == 401 and np.all(np.isfinite(x))
    np.testing.assert_allclose([x[0], x[-1]], [lo, hi], rtol=1e-15)
    np.testing.assert_allclose(np.diff(x), (hi / 400 - lo / 400), rtol=1e-9)  # evenly spaced
    with np.errstate(over="ignore"):  # 2 * 1.7e308: inf, in its lane
        forward = 2.0 * x if spec == LINE else 0.5 * x + 0.5e308
    np.testing.assert_allclose(drawn_values(top), forward, rtol=1e-9, atol=1e296)
    assert bottom.xaxis.get_major_formatter().get_offset() == UNIT
    assert any(t.startswith("x axis in units of 10³⁰⁸") for t in legend_texts(bottom))
    code, err = user_run(tmp_path, "plot", "curve", "s.yaml", *args, "-o", "y.png")
    assert (code, err) == (0, "")
