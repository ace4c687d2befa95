"""plot train draws each metric too: at its evaluation steps, training part solid, test dashed.

The TrainRecords are written by hand here; what is checked is where each number lands.
"""
from types import SimpleNamespace

import numpy as np
import pytest

from gradcli.backends.program import TrainRecord
from gradcli.plot import figure_bytes
from gradcli.plot.train import train_figure, training_runs


def run(name, loss, final_loss, acc, eval_steps, backend="numpy", loss_name="xent",
        metric="accuracy"):
    exp = SimpleNamespace(name=name, path=f"{name}.yaml", train=SimpleNamespace(loss=loss_name))
    record = TrainRecord(loss=loss, params={}, gradients=[], final_loss=final_loss, steps=len(loss),
                         eval_steps=eval_steps, metrics={metric: acc})
    return exp, None, SimpleNamespace(train=record, backend=backend)


def by_label(ax) -> dict:
    return {line.get_label(): line for line in ax.get_lines()}


def figure():
    a = run("a", [10.0 ** -k for k in range(6)], 1e-6,
            {"train": [0.25, 0.5, 0.75, 1.0], "test": [0.0, 0.5, 0.5, 0.75]}, [0, 2, 4, 6])
    b = run("b", [1.0, 0.9, 0.8], 0.7, {"train": [0.5, 0.625]}, [0, 3])
    return train_figure("a vs b", training_runs([a, b], several_specs=True))


def test_each_metric_has_its_axes_at_the_evaluation_steps_train_solid_test_dashed():
    fig = figure()
    loss_ax, acc_ax = fig.axes
    assert loss_ax.get_ylabel() == "loss (xent)" and acc_ax.get_ylabel() == "accuracy"
    assert loss_ax.get_yscale() == "log"    # 1 down to 1e-6: six decades
    assert acc_ax.get_yscale() == "linear"  # 0.25 .. 1
    loss = by_label(loss_ax)
    np.testing.assert_array_equal(loss["a"].get_xdata(), np.arange(6))
    np.testing.assert_array_equal(loss["a"].get_ydata(), [1, 0.1, 0.01, 1e-3, 1e-4, 1e-5])
    np.testing.assert_array_equal(loss["a, final, after 6 steps"].get_xdata(), [6])
    np.testing.assert_array_equal(loss["a, final, after 6 steps"].get_ydata(), [1e-6])
    np.testing.assert_array_equal(loss["b"].get_ydata(), [1.0, 0.9, 0.8])
    np.testing.assert_array_equal(loss["b, final, after 3 steps"].get_ydata(), [0.7])
    acc = by_label(acc_ax)
    assert set(acc) == {"a (train)", "a (test)", "b"}  # b has no test part
    np.testing.assert_array_equal(acc["a (train)"].get_xdata(), [0, 2, 4, 6])
    np.testing.assert_array_equal(acc["a (train)"].get_ydata(), [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(acc["a (test)"].get_xdata(), [0, 2, 4, 6])
    np.testing.assert_array_equal(acc["a (test)"].get_ydata(), [0.0, 0.5, 0.5, 0.75])
    np.testing.assert_array_equal(acc["b"].get_xdata(), [0, 3])
    assert acc["a (train)"].get_linestyle() == "-" and acc["a (test)"].get_linestyle() == "--"
    # the second run's training part has a dash of its own, which neither of a's lines has
    # (tryout12 3.6: both solid, the second run hid the first where they coincided)
    dashes = {name: line._unscaled_dash_pattern for name, line in acc.items()}
    assert dashes["b"][1] not in (dashes["a (train)"][1], dashes["a (test)"][1])
    assert dashes["b"][1] is not None  # a dash, not a solid line
    assert loss["b"]._unscaled_dash_pattern == dashes["b"]  # the same on every axes
    assert acc["a (train)"].get_color() == acc["a (test)"].get_color() != acc["b"].get_color()


def test_the_figure_renders_to_png(tmp_path):
    png = figure_bytes(figure(), "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "train.png").write_bytes(png)


def points(ax) -> dict:
    """{label: (x, y, marker, linestyle)} of every line of an axes (edge marks included, the
    lanes' unlabelled rules not)."""
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()), line.get_marker(),
                               line.get_linestyle()) for line in ax.get_lines()
            if not line.get_label().startswith("_")}


def test_with_data_the_final_loss_is_its_own_marker_not_the_end_of_the_batch_line():
    """Batch losses 2.0, 1.5, 1.8 (3 steps, 1 epoch); the whole training part's loss after
    them is 0.9: drawn alone at step 3, not joined to the batch line."""
    record = TrainRecord(loss=[2.0, 1.5, 1.8], params={}, gradients=[], final_loss=0.9, steps=3,
                         epochs=1)
    exp = SimpleNamespace(name="d", path="d.yaml", train=SimpleNamespace(loss="xent"))
    fig = train_figure("d", training_runs([(exp, None, SimpleNamespace(train=record, backend="numpy"))],
                                          several_specs=False))
    (ax,) = fig.axes
    assert points(ax) == {"d": ([0, 1, 2], [2.0, 1.5, 1.8], "o", "-"),
                          "d, final, whole training part": ([3], [0.9], "*", "None")}
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["d", "d, final, whole training part"]


def test_a_run_stopped_at_step_1_ends_at_step_1(tmp_path, monkeypatch):
    """log(x) with sgd lr 0.4 from x = [0.5, 1]: gradient 1/x = [2, 1], so x becomes
    [-0.3, 0.6] and the loss before step 1 is NaN; training stops there. The figure ends at
    step 1 with one NaN mark, not at a step 2 that never happened."""
    from click.testing import CliRunner

    import gradcli.plot.train as module
    from gradcli.cli import cli
    x = np.array([0.5, 1.0])
    first = float(np.sum(np.log(x)))
    with np.errstate(invalid="ignore"):
        second = float(np.sum(np.log(x - 0.4 / x)))
    assert np.isnan(second)
    spec = tmp_path / "nan.yaml"
    spec.write_text("name: nanstop\ninputs:\n  x: [0.5, 1.0]\noutputs:\n  loss: sum(log(x))\n"
                    "train: {optimizer: {name: sgd, lr: 0.4}, steps: 5}\n")
    drawn, figure = {}, module.train_figure

    def keep(title, runs, units=None, text=None):
        drawn["fig"] = fig = figure(title, runs, units, text)
        return fig
    monkeypatch.setattr(module, "train_figure", keep)
    result = CliRunner().invoke(cli, ["plot", "train", str(spec), "--output", str(tmp_path / "t.png")])
    assert result.exit_code == 0, result.output
    (ax,) = drawn["fig"].axes
    found = points(ax)
    assert set(found) == {"nanstop", "nanstop: NaN"}
    xs, ys, _, _ = found["nanstop"]
    assert xs == [0, 1] and ys[0] == pytest.approx(first, rel=1e-6) and np.isnan(ys[1])
    assert found["nanstop: NaN"][0] == [1]
    assert max(x for xs, *_ in found.values() for x in xs) == 1


def test_a_stopped_run_with_data_keeps_its_final_marker_at_the_stopping_step():
    record = TrainRecord(loss=[2.0, 1.0, float("nan")], params={}, gradients=[], final_loss=0.5,
                         steps=2, epochs=1)
    from gradcli.plot.train import loss_points
    assert loss_points(record) == ([2.0, 1.0, record.loss[2]],
                                   {"step": 2, "value": 0.5, "label": "final, whole training part"})


def test_two_runs_apart_are_not_called_overlapping_and_alike_ones_are():
    from gradcli.plot.train import overlaps
    a = np.array([1.0, 0.5, 0.25])
    under, depth = overlaps([("numpy", a), ("torch", a + 1e-6), ("jax", a * 2)])
    assert under == [None, "numpy", None] and depth == [1, 0, 0]


def test_a_final_star_on_top_of_another_says_so_one_at_another_step_does_not():
    # two runs whose lines differ but whose final losses coincide (0.4 vs 0.4 + 1e-9 of a 0.6
    # span): one star hides the other, so the legend says so, as for lines
    acc = {"train": [0.5, 0.6]}
    a = run("a", [1.0, 0.8, 0.6], 0.4, acc, [0, 3])
    b = run("b", [0.9, 0.7, 0.5], 0.4 + 1e-9, acc, [0, 3])
    c = run("c", [0.95, 0.75, 0.55, 0.45], 0.4, acc, [0, 4])  # its star is at step 4
    fig = train_figure("stars", training_runs([a, b, c], several_specs=True))
    labels = set(by_label(fig.axes[0]))
    assert {"a, final, after 3 steps", "b, final, after 3 steps, overlaps a, final, after 3 steps",
            "c, final, after 4 steps"} <= labels


def test_on_a_log_axis_overlap_is_judged_in_decades():
    # sgd 0.25 on sum(w*w) from w = [7, -7] halves w each step: loss 98 * 0.25**k (numpy);
    # the same plus a constant 0.05 stalls there, 8 decades above at step 20, within 0.2 of
    # the first everywhere (0.2% of the linear span 98): not one line on the log axis
    k = np.arange(20)
    w = np.array([7.0, -7.0])
    loss = []
    for _ in k:
        loss.append(float(np.sum(w * w)))
        w = w - 0.25 * 2 * w
    final = float(np.sum(w * w))
    assert np.allclose(loss, 98 * 0.25 ** k) and np.log10((final + 0.05) / final) > 8
    near = [v * (1 + 1e-7) for v in loss]  # a run on top of the first, as numpy vs torch
    runs = [run("converges", loss, final, {"train": [0.5]}, [0]),
            run("stuck", [v + 0.05 for v in loss], final + 0.05, {"train": [0.5]}, [0]),
            run("same", near, final * (1 + 1e-7), {"train": [0.5]}, [0])]
    fig = train_figure("overlap", training_runs(runs, several_specs=True))
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = set(by_label(ax))
    assert "stuck" in labels and "stuck, final, after 20 steps" in labels
    assert "same, overlaps converges" in labels
    assert "same, final, after 20 steps, overlaps converges, final, after 20 steps" in labels
    assert not any(label.startswith("stuck") and "overlaps" in label for label in labels)


def test_the_legend_sits_outside_the_axes_one_entry_per_line_and_one_for_the_stars():
    """Four runs of one spec whose lines and final stars coincide (numpy, torch, jax, tf):
    the legend lies right of the axes (it covers no point) and names each line once; the
    four stars share one entry, so no label repeats another."""
    loss = [84.5, 76.25, 68.70125]
    runs = [run(name, loss, 61.7680125, {"train": [0.5]}, [0], backend=name)
            for name in ("numpy", "torch", "jax", "tensorflow")]
    fig = train_figure("clip-norm", training_runs(runs, several_specs=True))
    ax = fig.axes[0]
    fig.canvas.draw()
    legend = ax.get_legend()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # right of the axes
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:4] == ["numpy", "torch, overlaps numpy", "jax, overlaps numpy",
                          "tensorflow, overlaps numpy"]
    assert len(labels) == 5 and labels[4].startswith("final, after 3 steps\n")
    assert "some lie on one another" in labels[4]
    assert len(set(labels)) == len(labels) and not any(", final" in t for t in labels)
    # the four stars are still drawn, each at its value
    stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert [list(s.get_xdata()) for s in stars] == [[3]] * 4
    assert [list(s.get_ydata()) for s in stars] == [[61.7680125]] * 4


@pytest.mark.parametrize("loss_name, metric, labels", [
    ("loss", "accuracy", ["loss", "accuracy"]),            # not "loss (loss)"
    ("xent", "accuracy", ["loss (xent)", "accuracy"]),     # the name alone would not say loss
    ("train_loss", "acc", ["train_loss", "acc"]),          # the name says it already
    ("LogLoss", "top1", ["LogLoss", "top1"]),
    ("loss", "loss", ["loss", "loss (metric)"]),           # a metric named loss: told apart
    ("xent", "xent", ["loss (xent)", "xent"]),
])
def test_each_axes_y_label_reads_as_what_it_shows(loss_name, metric, labels):
    a = run("a", [1.0, 0.5], 0.25, {"train": [0.5, 0.75]}, [0, 2], loss_name=loss_name,
            metric=metric)
    fig = train_figure("a", training_runs([a], several_specs=False))
    assert [ax.get_ylabel() for ax in fig.axes] == labels


def test_two_specs_with_differently_named_losses_get_an_axes_each():
    a = run("a", [1.0, 0.5], 0.25, {"train": [0.5, 0.75]}, [0, 2], loss_name="loss")
    b = run("b", [2.0, 1.5], 1.0, {"train": [0.25, 0.5]}, [0, 2], loss_name="nll")
    fig = train_figure("a vs b", training_runs([a, b], several_specs=True))
    assert [ax.get_ylabel() for ax in fig.axes] == ["loss", "accuracy", "loss (nll)"]
