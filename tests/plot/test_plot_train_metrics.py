"""plot train draws each metric too: at its evaluation steps, training part solid, test dashed.

The TrainRecords are written by hand here; what is checked is where each number lands.
"""
from types import SimpleNamespace

import numpy as np

from gradcli.backends.program import TrainRecord
from gradcli.plot import figure_bytes
from gradcli.plot.train import train_figure, training_runs


def run(name, loss, final_loss, acc, eval_steps, backend="numpy"):
    exp = SimpleNamespace(name=name, path=f"{name}.yaml", train=SimpleNamespace(loss="xent"))
    record = TrainRecord(loss=loss, params={}, gradients=[], final_loss=final_loss, steps=len(loss),
                         eval_steps=eval_steps, metrics={"accuracy": acc})
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
    np.testing.assert_array_equal(loss["a"].get_xdata(), np.arange(7))
    np.testing.assert_array_equal(loss["a"].get_ydata(), [1, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6])
    np.testing.assert_array_equal(loss["b"].get_ydata(), [1.0, 0.9, 0.8, 0.7])
    acc = by_label(acc_ax)
    assert set(acc) == {"a (train)", "a (test)", "b"}  # b has no test part
    np.testing.assert_array_equal(acc["a (train)"].get_xdata(), [0, 2, 4, 6])
    np.testing.assert_array_equal(acc["a (train)"].get_ydata(), [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(acc["a (test)"].get_xdata(), [0, 2, 4, 6])
    np.testing.assert_array_equal(acc["a (test)"].get_ydata(), [0.0, 0.5, 0.5, 0.75])
    np.testing.assert_array_equal(acc["b"].get_xdata(), [0, 3])
    assert acc["a (train)"].get_linestyle() == "-" and acc["b"].get_linestyle() == "-"
    assert acc["a (test)"].get_linestyle() == "--"
    assert acc["a (train)"].get_color() == acc["a (test)"].get_color() != acc["b"].get_color()


def test_the_figure_renders_to_png(tmp_path):
    png = figure_bytes(figure(), "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "train.png").write_bytes(png)
