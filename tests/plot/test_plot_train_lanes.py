"""plot train with several runs of a diverging spec (review8 F2): each run's NaN and +inf
marks lie in a lane of their own outside the data's range, labelled as plot curve's are,
and the non-finite final values of the runs share one legend entry.

Oracle: the losses of sgd written out in numpy here (w and x both trained).
"""
import numpy as np
from test_plot_figures import invoke

import gradcli.plot.train as train_module
from gradcli.plot.train import train_figure

DIVERGE = """name: diverge
inputs:
  w: [1.0, 2.0]
  x: [3.0, 1.0]
outputs:
  loss: sum(exp(w * x))
train:
  loss: loss
  optimizer: {name: sgd, lr: 10.0}
  steps: 6
  on_nonfinite: continue
"""


def numpy_losses(steps: int = 6) -> tuple[list, float]:
    w, x, losses = np.array([1.0, 2.0]), np.array([3.0, 1.0]), []
    with np.errstate(all="ignore"):
        for _ in range(steps):
            e = np.exp(w * x)
            losses.append(float(np.sum(e)))
            w, x = w - 10.0 * x * e, x - 10.0 * w * e
        return losses, float(np.sum(np.exp(w * x)))


def drawn_figure(tmp_path, monkeypatch, *args):
    drawn = {}

    def keep(title, runs, units=None, text=None):
        drawn["fig"] = fig = train_figure(title, runs, units, text)
        return fig
    monkeypatch.setattr(train_module, "train_figure", keep)
    (tmp_path / "div.yaml").write_text(DIVERGE)
    result = invoke("plot", "train", str(tmp_path / "div.yaml"), *args,
                    "--output", str(tmp_path / "div.png"))
    assert result.exit_code == 0, result.output
    (ax,) = drawn["fig"].axes
    return drawn["fig"], ax


def test_each_runs_non_finite_marks_have_a_lane_outside_the_data(tmp_path, monkeypatch):
    losses, final = numpy_losses()
    steps = np.arange(6)
    assert np.isposinf(losses[1]) and np.isnan(losses[3]) and np.isnan(final)
    fig, ax = drawn_figure(tmp_path, monkeypatch, "--backends", "numpy,torch")
    marks = {line.get_label(): line for line in ax.get_lines()}
    levels = {}
    for run in ("numpy", "torch"):
        for kind, where in (("NaN", np.isnan(losses)), ("+inf", np.isposinf(losses))):
            mark = marks[f"{run}: {kind}"]
            np.testing.assert_array_equal(mark.get_xdata(), steps[where])
            assert mark.get_transform() == ax.get_xaxis_transform()  # y in axes coordinates
            levels[run, kind] = set(mark.get_ydata())
        # the final NaN is a star in its run's NaN lane, at step 6
        star = marks[f"{run}, final, after 6 steps: NaN"]
        assert list(star.get_xdata()) == [6] and star.get_marker() == "*"
        assert set(star.get_ydata()) == levels[run, "NaN"]
    assert all(len(level) == 1 for level in levels.values())
    assert len({next(iter(level)) for level in levels.values()}) == 4  # no mark hides another
    # every lane lies outside the data's range: below (NaN) or above (+inf) every finite loss
    to_data = ax.transAxes + ax.transData.inverted()
    finite = [v for v in losses if np.isfinite(v)]
    for (_, kind), level in levels.items():
        y = to_data.transform((0, next(iter(level))))[1]
        assert (y < min(finite)) if kind == "NaN" else (y > max(finite))
    # each lane named beside the axis, as plot curve's
    assert sorted(t.get_text() for t in ax.texts) == ["+inf", "+inf", "NaN", "NaN"]
    # the two runs' NaN finals share one legend entry
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    finals = [text for text in legend if "final" in text]
    assert finals == ["final, after 6 steps: NaN\n(each run's star in its colour)"]
    assert not any(text.startswith("_") for text in legend)


def test_one_runs_non_finite_final_keeps_its_own_legend_entry(tmp_path, monkeypatch):
    _, ax = drawn_figure(tmp_path, monkeypatch)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "diverge, final, after 6 steps: NaN" in legend
    assert legend.count("diverge: NaN") == 1
