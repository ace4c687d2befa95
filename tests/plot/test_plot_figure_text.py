"""The words a paper needs in place of gradcli's (--title, --subtitle, --xlabel, --ylabel,
--legend-title, --label) on plot train and plot curve, and plot train's markers: on each
point of a sparse line (a metric's evaluation points), none on a dense one (a loss per step).
plot sweep's are in test_plot_sweep_curves.py."""
import numpy as np
import pytest
from click.testing import CliRunner

import gradcli.plot.curve as curve_module
from gradcli.cli import cli
from gradcli.curve import sweep
from gradcli.errors import GradcliError
from gradcli.plot.curve import curve_figure
from gradcli.plot.text import FigureText
from gradcli.plot.train import train_figure
from gradcli.spec import load_spec_text

STEPS = 70
EVAL = list(range(0, STEPS + 1, 7))


def runs():
    rng = np.random.default_rng(3)
    return [(name, {"loss (xent)": {"train": list(1 + rng.random(STEPS)), "ylabel": "loss (xent)"},
                    "accuracy": {"train": list(rng.random(len(EVAL))),
                                 "test": list(rng.random(len(EVAL))), "steps": EVAL}})
            for name in ("est-identity", "est-hardtanh")]


def test_a_dense_loss_has_no_markers_and_a_metric_one_at_each_evaluation_point():
    fig = train_figure("t", runs())
    loss_ax, metric_ax = fig.axes
    dense = [li for li in loss_ax.get_lines() if str(li.get_gid()).startswith("loss (xent):")
             and ", final" not in li.get_gid()]
    assert len(dense) == 2 and all(li.get_marker() in ("None", None, "") for li in dense)
    sparse = [li for li in metric_ax.get_lines() if str(li.get_gid()).startswith("accuracy:")]
    assert len(sparse) == 4
    for li in sparse:  # every evaluation point marked, and only those
        assert li.get_marker() not in ("None", None, "") and li.get_markevery() is None
        np.testing.assert_array_equal(li.get_xdata(), EVAL)


def test_train_figure_takes_the_users_words_and_names():
    text = FigureText(title="Estimators", xlabel="step", ylabels=("cross-entropy", "acc."),
                      legend_title="STE", names={"est-identity": "identity STE"})
    fig = train_figure("t", runs(), text=text)
    loss_ax, metric_ax = fig.axes
    assert fig._suptitle.get_text() == "Estimators"
    assert (loss_ax.get_ylabel(), metric_ax.get_ylabel()) == ("cross-entropy", "acc.")
    assert metric_ax.get_xlabel() == "step"
    assert loss_ax.get_legend().get_title().get_text() == "STE"
    labels = [t.get_text() for t in metric_ax.get_legend().get_texts()]
    assert labels[:2] == ["identity STE (train)", "identity STE (test)"]
    assert "est-hardtanh (train)" in labels


@pytest.mark.parametrize("text, message", [
    (FigureText(ylabels=("a", "b", "c")), "--ylabel given 3 times, but the figure has 2 axes"),
    (FigureText(names={"est-identit": "x"}), "did you mean 'est-identity'"),
])
def test_train_figure_refuses_words_it_has_no_place_for(text, message):
    with pytest.raises(GradcliError, match=message):
        train_figure("t", runs(), text=text)


SIGN = """
name: sign-ste
inputs: {x: [-0.5, 0.5]}
override_map: {Sign: hardtanh}
outputs:
  y: sign(x)
"""


def test_curve_figure_takes_a_label_per_axes_top_to_bottom():
    curve = sweep(load_spec_text(SIGN, path="s.yaml"), "x", span=(-2.0, 2.0), points=21)
    text = FigureText(title="", subtitle="sign and its STE", xlabel="x",
                      ylabels=("sign(x)", "d sign / dx"))
    fig = curve_figure(curve, text)
    top, bottom = fig.axes
    assert fig._suptitle is None and top.get_title() == "sign and its STE"
    assert (top.get_ylabel(), bottom.get_ylabel(), bottom.get_xlabel()) == (
        "sign(x)", "d sign / dx", "x")


def test_plot_curve_and_plot_train_take_the_options(tmp_path, monkeypatch):
    spec = tmp_path / "s.yaml"
    spec.write_text(SIGN)
    kept = {}
    real = curve_module.curve_figure
    monkeypatch.setattr(curve_module, "curve_figure",
                        lambda c, text=None: kept.setdefault("fig", real(c, text)))
    result = CliRunner().invoke(cli, ["plot", "curve", str(spec), "--points", "11", "--title",
                                      "Sign", "--ylabel", "out", "-o", str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.output
    assert kept["fig"]._suptitle.get_text() == "Sign"
    assert kept["fig"].axes[0].get_ylabel() == "out"
    result = CliRunner().invoke(cli, ["plot", "curve", str(spec), "--points", "11",
                                      *["--ylabel", "a"] * 3, "-o", str(tmp_path / "d.png")])
    assert result.exit_code == 2 and "--ylabel given 3 times" in result.output
    assert "--label" not in CliRunner().invoke(cli, ["plot", "curve", "--help"]).output
    for command in ("train", "sweep"):
        shown = CliRunner().invoke(cli, ["plot", command, "--help"]).output
        for option in ("--title", "--subtitle", "--xlabel", "--ylabel", "--legend-title",
                       "--label"):
            assert option in shown


def test_label_renames_a_line_whose_name_holds_an_equals_sign(tmp_path):
    """--label splits at the '=' that leaves a line's name on the left (tryout12 3.3: the
    documented `reverse_gradient(h, scale=1.0)` could not be renamed)."""
    from gradcli.plot.sweep import SweepLine, SweepSeries, sweep_figure
    names = ["reverse_gradient(h, scale=1.0)", "reverse_gradient(h, scale=0.0)"]
    series = SweepSeries("step", "loss", "let.hr", [0, 1], np.array([0.0, 1.0]), False,
                         [SweepLine(n, np.array([1.0, k]), np.full(2, np.nan), np.ones(2, int))
                          for k, n in enumerate(names)])
    text = FigureText(labels=("reverse_gradient(h, scale=1.0)=λ = 1",
                              "reverse_gradient(h, scale=0.0)=no reversal"))
    fig = sweep_figure("grl", series, text)
    shown = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert shown[:2] == ["λ = 1 (n=1)", "no reversal (n=1)"]
    # through the CLI: two specs, one named with '=' (plot train's lines are spec names)
    for name in ("scale=1.0", "other"):
        (tmp_path / f"{name}.yaml").write_text(
            f"name: '{name}'\ninputs: {{w: [1.0]}}\noutputs: {{loss: sum(w * w)}}\n"
            "train: {optimizer: {name: sgd, lr: 0.1}, steps: 3}\n")
    args = ["plot", "train", str(tmp_path / "scale=1.0.yaml"), str(tmp_path / "other.yaml"),
            "-o", str(tmp_path / "t.png")]
    assert CliRunner().invoke(cli, [*args, "--label", "scale=1.0=one"]).exit_code == 0
    wrong = CliRunner().invoke(cli, [*args, "--label", "scale=2.0=two"])
    assert wrong.exit_code == 2
    assert "--label 'scale'=...: no line is named so" in wrong.output


def test_plot_curve_help_says_one_element_is_set_and_the_others_keep_their_values():
    """The help said every element of the input takes each value (tryout12 3.4); the figure
    sets one and keeps the others (README, the figure's subtitle, curve.sweep)."""
    shown = " ".join(CliRunner().invoke(cli, ["plot", "curve", "--help"]).output.split())
    assert "every element of the input takes each value" not in shown
    assert "the input's other elements and the other inputs keep the spec's values" in shown
