"""plot curve: NaN and inf points are marks in lanes of their own, outside the data's range,
over every line, one lane per series (tryout7 finding 5: NaN marks hid one another and sat at
y = 0, where they read as a gradient of 0)."""
import numpy as np
from test_plot_figures import lines

from gradcli.curve import sweep
from gradcli.plot.curve import curve_figure
from gradcli.spec import load_spec_text


def rules(ax) -> list:
    """The lanes' dashed rules (their edges towards the data), in axes coordinates."""
    return [float(line.get_ydata()[0]) for line in ax.get_lines()
            if line.get_label() == "_lane rule"]


def assert_ticks_clear_of_the_lanes(fig, ax):
    """Every y tick lies between the lanes' rules, not on one, and no tick label overlaps a
    lane's label once drawn (review8 T3: the test compared ticks with the marks' centres)."""
    edges = rules(ax)
    below = [r for r in edges if r < 0.5]
    above = [r for r in edges if r > 0.5]
    to_axes = ax.transData + ax.transAxes.inverted()
    ticks = [to_axes.transform((0, t))[1] for t in ax.get_yticks()]
    assert ticks
    for t in ticks:  # inside the axes, between the lanes and not on a rule
        assert -1e-9 <= t <= 1 + 1e-9
        assert all(t > r + 0.02 for r in below) and all(t < r - 0.02 for r in above)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [label.get_window_extent(renderer) for label in ax.get_yticklabels()
              if label.get_text() and label.get_visible()]
    lanes = [text.get_window_extent(renderer) for text in ax.texts]
    assert labels and lanes
    assert not any(a.overlaps(b) for a in labels for b in lanes)


SQRT = "name: roots\ninputs: {x: [0.25, 4.0]}\noutputs:\n  y: sum(sqrt(x))\n"


def test_nan_marks_lie_in_lanes_of_their_own_below_every_value_and_on_top():
    xs = np.linspace(-1.0, 1.0, 9)
    with np.errstate(invalid="ignore", divide="ignore"):
        true = 0.5 / np.sqrt(xs)  # numpy's d sqrt(x)/dx: NaN for x < 0, +inf at 0
        numeric = (np.sqrt(xs + 1e-6) - np.sqrt(xs - 1e-6)) / 2e-6  # NaN for x <= 0
    curve = sweep(load_spec_text(SQRT, path="s.yaml"), "x", span=(-1.0, 1.0), points=9,
                  element=(0,))
    fig = curve_figure(curve)
    _, bottom = fig.axes
    drawn = lines(bottom)
    names = ["true derivative", "overridden gradient", "numeric derivative"]
    nan_marks = [drawn[f"{name}: NaN"] for name in names]
    for mark, expected in zip(nan_marks, [true, true, numeric]):  # every NaN x is marked
        np.testing.assert_array_equal(mark.get_xdata(), xs[np.isnan(expected)])
        assert mark.get_marker() == "X"
    levels = [float(mark.get_ydata()[0]) for mark in nan_marks]  # axes coordinates
    assert len(set(levels)) == 3  # one lane each: no NaN mark hides another
    # the lanes lie below every value drawn, and no y tick (value) reaches into them, so a
    # mark cannot be read as a value
    low, _ = bottom.get_ylim()
    to_data = bottom.transAxes + bottom.transData.inverted()
    centres = [to_data.transform((0, level))[1] for level in levels]
    finite = true[np.isfinite(true)]
    assert low < min(centres) and max(centres) < finite.min()
    assert_ticks_clear_of_the_lanes(fig, bottom)
    # over every line and shading
    series = [line for line in bottom.get_lines() if ": " not in line.get_label()]
    under = series + bottom.collections + bottom.patches
    assert min(m.get_zorder() for m in nan_marks) > max(o.get_zorder() for o in under)
    # the legend names them, and each lane says what it holds beside the axis
    legend = [t.get_text() for t in bottom.get_legend().get_texts()]
    assert {f"{name}: NaN" for name in names} <= set(legend)
    assert sum(t.get_text() == "NaN" for t in bottom.texts) == 3
    # the +inf at x = 0 is at the top, in its own lane, above every value
    inf = drawn["true derivative: +inf"]
    assert list(inf.get_xdata()) == [0.0] and inf.get_ydata()[0] > 0.9


CONST = "name: const-grad\ninputs:\n  x: [1.0]\noutputs:\n  y: x * 2.0 + 0.0 * log(x)\n"


def test_no_y_tick_sits_on_a_lane_rule_or_under_its_label():
    # review8 F3: the derivative is 2 where finite and NaN for x <= 0; the tick 1.0 sat on
    # the rule of the lanes below, its label on the lane's "NaN"
    xs = np.linspace(-1.0, 1.0, 41)
    with np.errstate(invalid="ignore", divide="ignore"):
        forward = xs * 2.0 + 0.0 * np.log(xs)
    curve = sweep(load_spec_text(CONST, path="const.yaml"), "x", span=(-1.0, 1.0), points=41)
    np.testing.assert_array_equal(curve.forward, forward)
    fig = curve_figure(curve)
    for ax in fig.axes:
        assert rules(ax)
        assert_ticks_clear_of_the_lanes(fig, ax)
