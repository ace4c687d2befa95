"""An 800-character name in any place a figure shows one (spec, run, loss, metric, input,
output, sweep, hue value, category) is cut in its middle with an ellipsis to fit its room:
no constrained-layout warning (the axes collapsed to nothing), every text inside the figure,
and figures of ordinary names drawn exactly as without the fitting."""
import warnings

import pytest
from click.testing import CliRunner
from sweep_fixture import write_sweep
from train_spec import write_spec

from gradcli.cli import cli
from gradcli.plot import fit

LONG = "n" * 200 + "_" + "m" * 600
def spec(tmp_path, file="m.yaml", name="short", inp="w", loss="loss", met="acc"):
    return str(write_spec(tmp_path / file, name, inp, loss, met))


def sweep(tmp_path, name="ste-lr", hue_value="hardtanh"):
    write_sweep(tmp_path / "sw", name=name)
    csv = tmp_path / "sw" / "results.csv"
    csv.write_text(csv.read_text().replace("hardtanh", hue_value))
    return str(tmp_path / "sw")


CASES = {
    "train, spec": lambda t: ["plot", "train", spec(t, name=LONG)],
    "train, two specs": lambda t: ["plot", "train", spec(t, "a.yaml", name=LONG),
                                   spec(t, "b.yaml", name=LONG + "x")],
    "train, loss": lambda t: ["plot", "train", spec(t, loss="l" + LONG)],
    "train, metric": lambda t: ["plot", "train", spec(t, met="a" + LONG)],
    "curve, spec": lambda t: ["plot", "curve", spec(t, name=LONG)],
    "curve, input": lambda t: ["plot", "curve", spec(t, inp="i" + LONG)],
    "curve, output": lambda t: ["plot", "curve", spec(t, loss="o" + LONG)],
    "sweep, name": lambda t: ["plot", "sweep", sweep(t, name=LONG), "--x", "train.optimizer.lr",
                              "--y", "final_loss", "--hue", "override_map.sign"],
    "sweep, hue value": lambda t: ["plot", "sweep", sweep(t, hue_value="h" + LONG), "--x",
                                   "train.optimizer.lr", "--y", "final_loss", "--hue",
                                   "override_map.sign"],
    "sweep, category": lambda t: ["plot", "sweep", sweep(t, hue_value="h" + LONG), "--x",
                                  "override_map.sign", "--y", "final_loss"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_long_name_is_drawn_without_a_layout_warning_and_inside_the_figure(tmp_path, case,
                                                                             monkeypatch):
    figures = []
    real = fit.figure

    def keep(fig, legend_share):
        real(fig, legend_share)
        figures.append(fig)
    monkeypatch.setattr(fit, "figure", keep)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = CliRunner().invoke(cli, CASES[case](tmp_path) + ["--output",
                                                                str(tmp_path / "f.png")])
    assert done.exit_code == 0, done.output
    assert [str(w.message) for w in caught] == []
    (fig,) = figures
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)  # the figure was closed once written: drawn again, laid out
    canvas.draw()
    renderer = canvas.get_renderer()
    inside = fig.bbox.expanded(1.001, 1.001)
    texts = [fig._suptitle] + [t for ax in fig.axes for t in (
        ax.title, ax.xaxis.label, ax.yaxis.label,
        *[t for t in ax.get_xticklabels() if any(c.isalpha() for c in t.get_text())],  # names
        *(ax.get_legend().get_texts() if ax.get_legend() else []))]
    for text in texts:
        if text is not None and text.get_text() and text.get_visible():
            box = text.get_window_extent(renderer)
            assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1), \
                text.get_text()
    shown = " ".join(t.get_text() for t in texts if t is not None)
    assert fit.ELLIPSIS in shown and LONG not in shown


def test_two_names_that_differ_at_their_end_stay_apart():
    a, b = fit.middle(LONG, 30), fit.middle(LONG + "x", 30)
    assert len(a) == len(b) == 30 and a != b
    assert a.startswith("nnnn") and a.endswith("mmmm") and fit.ELLIPSIS in a
    assert fit.middle("short", 30) == "short"


@pytest.mark.parametrize("command", [
    ["plot", "train", "experiments/quantization_aware_digits.yaml"],
    ["plot", "curve", "experiments/ste_sign_quantize_grad.yaml"],
    ["plot", "sweep", "tests/plot/data/sweep-real", "--x", "train.optimizer.lr", "--y",
     "final_loss", "--hue", "override_map.Sign"],
])
def test_ordinary_names_are_drawn_as_they_were(tmp_path, monkeypatch, command):
    """The fitting shortens nothing in the bundled figures: every text is the same with it
    and without it."""
    seen = []
    real = fit.figure

    def texts(fig):
        return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]

    def compare(fig, legend_share):
        before = texts(fig)
        real(fig, legend_share)
        seen.append(before == texts(fig))
    monkeypatch.setattr(fit, "figure", compare)
    from pathlib import Path
    root = Path(__file__).parents[2]
    args = [str(root / a) if "/" in a else a for a in command]
    done = CliRunner().invoke(cli, args + ["--output", str(tmp_path / "f.png")])
    assert done.exit_code == 0, done.output
    assert seen == [True]


@pytest.mark.parametrize("name", [LONG, "é" * 300])
def test_the_default_file_name_of_a_long_name_is_cut_to_what_a_file_system_takes(
        tmp_path, monkeypatch, name):
    path = spec(tmp_path, name=name)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["plot", "train", path])
    assert done.exit_code == 0, done.output
    (png,) = tmp_path.glob("*-train.png")
    assert len(png.name.encode()) <= 255 and name.startswith(png.name[:-len("-train.png")])
