"""What each figure draws (the lines carry the data computed for them) and each file type."""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_plot_curve import SIGN_STE, expected_sign_ste

from gradcli.cli import cli
from gradcli.curve import sweep
from gradcli.plot.curve import curve_figure
from gradcli.plot.train import train_figure
from gradcli.spec import load_spec_text

ROOT = Path(__file__).parent.parent.parent
STE = str(ROOT / "experiments" / "ste_sign_quantize_grad.yaml")

DESCENT = """
name: descent
inputs: {w: 0.0}
outputs:
  loss: (w - 3.0) * (w - 3.0)
train: {loss: loss, optimizer: {name: sgd, lr: 0.1}, steps: STEPS}
"""


def lines(ax) -> dict:
    return {line.get_label(): line for line in ax.get_lines()}


def unbroken(line) -> tuple[np.ndarray, np.ndarray]:
    """A line's points without the NaN gaps the figure inserts at jumps."""
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    keep = ~np.isnan(x)
    return x[keep], y[keep]


def test_the_curve_figure_draws_the_series_numpy_expects():
    curve = sweep(load_spec_text(SIGN_STE, path="s.yaml"), "x", span=(-3.0, 3.0), points=401,
                  element=(0,))
    fig = curve_figure(curve)
    top, bottom = fig.axes
    xs = np.linspace(-3, 3, 401)
    forward, true, overridden, numeric = expected_sign_ste(xs)
    assert fig._suptitle.get_text() == "sign-hardtanh-ste"
    assert "y[0]" in top.get_ylabel() and "∂y[0]/∂x[0]" in bottom.get_ylabel()
    assert "x" in bottom.get_xlabel()
    x, y = unbroken(lines(top)["forward y[0]"])
    np.testing.assert_array_equal(x, xs)
    np.testing.assert_array_equal(y, forward)
    # the forward's two jumps (-1 -> 0 -> 1) are gaps, not vertical lines
    assert np.isnan(lines(top)["forward y[0]"].get_ydata()).sum() == 2
    drawn = lines(bottom)
    for label, expected in (("true derivative", true),
                            ("overridden gradient (used by training)", overridden)):
        x, y = unbroken(drawn[label])
        np.testing.assert_array_equal(x, xs)
        np.testing.assert_array_equal(y, expected)
    # the numeric spike at the jump (1e6) is off scale: not in the line, marked at the edge
    x, y = unbroken(drawn["numeric derivative (central differences)"])
    shown = np.abs(numeric) < 10
    np.testing.assert_allclose(y[~np.isnan(y)], numeric[shown], atol=1e-6)
    np.testing.assert_array_equal(drawn["numeric derivative: off scale (above)"].get_xdata(),
                                  xs[~shown])
    # where the overridden gradient differs from the true one, the region is shaded
    shade = [c for c in bottom.collections if c.get_label() == "overridden ≠ true"]
    assert len(shade) == 1
    vertices = np.concatenate([p.vertices for p in shade[0].get_paths()])
    assert vertices[:, 0].min() == pytest.approx(-1.0, abs=0.016)
    assert vertices[:, 0].max() == pytest.approx(1.0, abs=0.016)
    assert all(ax.get_legend() is not None for ax in fig.axes)


def test_nan_and_inf_are_marked_where_they_are():
    spec = "name: logs\ninputs: {x: [0.5, 2.0]}\noutputs:\n  y: log(x)\n"
    curve = sweep(load_spec_text(spec, path="s.yaml"), "x", span=(-1.0, 1.0), points=5)
    top, bottom = curve_figure(curve).axes
    assert list(lines(top)["forward y[0]: NaN"].get_xdata()) == [-1.0, -0.5]
    assert list(lines(top)["forward y[0]: -inf"].get_xdata()) == [0.0]
    assert list(lines(bottom)["true derivative: +inf"].get_xdata()) == [0.0]  # 1/x at 0


def descent_losses(steps: int) -> list:
    """sgd on (w - 3)^2 from w = 0 at lr 0.1, in numpy: the loss before each step and after
    (tf.train takes lr 0.1 as float32(0.1) = 0.10000000149011612)."""
    w, losses, lr = 0.0, [], float(np.float32(0.1))
    for _ in range(steps):
        losses.append((w - 3.0) ** 2)
        w -= 2 * (w - 3.0) * lr
    return [*losses, (w - 3.0) ** 2]


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("steps, scale", [(5, "linear"), (40, "log")])
def test_plot_train_draws_the_loss_per_step_and_goes_log_past_two_decades(tmp_path, steps, scale,
                                                                             monkeypatch):
    spec = tmp_path / "descent.yaml"
    spec.write_text(DESCENT.replace("STEPS", str(steps)))
    drawn = {}
    import gradcli.plot.train as train_module

    def keep(title, runs, units=None, text=None):
        drawn["fig"] = fig = train_figure(title, runs, units, text)
        return fig
    monkeypatch.setattr(train_module, "train_figure", keep)
    result = invoke("plot", "train", str(spec), "--backends", "numpy,torch",
                    "--output", str(tmp_path / "t.png"))
    assert result.exit_code == 0, result.stderr
    (ax,) = drawn["fig"].axes
    assert drawn["fig"]._suptitle.get_text() == "descent"
    assert ax.get_yscale() == scale
    assert ax.get_xlabel().startswith("training step") and ax.get_ylabel() == "loss"
    expected = descent_losses(steps)
    drawn = {line.get_gid(): line for line in ax.get_lines()}
    for backend in ("numpy", "torch"):
        line = drawn[f"loss (loss):{backend}"]  # the loss before each step ...
        np.testing.assert_array_equal(line.get_xdata(), np.arange(steps))
        np.testing.assert_allclose(line.get_ydata(), expected[:-1], rtol=1e-12)
        final = drawn[f"loss (loss):{backend}, final, after {steps} steps"]  # ... and after the last
        assert final.get_linestyle() == "None" and final.get_marker() == "*"
        np.testing.assert_array_equal(final.get_xdata(), [steps])
        np.testing.assert_allclose(final.get_ydata(), expected[-1:], rtol=1e-12)
    # the same run twice: the legend says so, and the line underneath is drawn wider
    assert set(lines(ax)) >= {"numpy", "torch, overlaps numpy"}
    assert lines(ax)["numpy"].get_color() != lines(ax)["torch, overlaps numpy"].get_color()
    assert lines(ax)["numpy"].get_linewidth() > lines(ax)["torch, overlaps numpy"].get_linewidth()


def test_each_file_type_by_extension(tmp_path):
    for name in ("c.png", "c.svg", "c.pdf"):
        result = invoke("plot", "curve", STE, "--points", "51", "--output", str(tmp_path / name))
        assert result.exit_code == 0, result.stderr
    png = (tmp_path / "c.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1080, 900)  # 7.2 x 6.0 inches at 150 dpi
    root = ET.fromstring((tmp_path / "c.svg").read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (tmp_path / "c.pdf").read_bytes()[:5] == b"%PDF-"


def test_default_output_is_the_spec_name_with_the_kind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert invoke("plot", "curve", STE, "--points", "11").exit_code == 0
    assert (tmp_path / "ste-sign-quantize-grad-curve.png").read_bytes()[:4] == b"\x89PNG"


def test_an_unknown_extension_is_refused_before_running(tmp_path):
    result = invoke("plot", "curve", STE, "--output", str(tmp_path / "c.jpg"))
    assert result.exit_code == 2
    assert "name it .png, .svg or .pdf" in result.stderr


def test_without_matplotlib_exit_2_with_the_pip_hint(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    for args in (["plot", "curve", STE], ["plot", "train", STE], ["report", STE]):
        result = invoke(*args, "--output", str(tmp_path / "f.png"))
        assert result.exit_code == 2, args
        assert "pip install 'gradcli[plot]'" in result.stderr
        assert "Traceback" not in result.stderr


def test_the_same_figure_gives_the_same_bytes(tmp_path):
    """`make figures` commits its output: redrawing an unchanged figure must not change it."""
    for name in ("a.svg", "b.svg", "a.pdf", "b.pdf"):
        assert invoke("plot", "curve", STE, "--points", "21", "--output",
                      str(tmp_path / name)).exit_code == 0
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()


def test_plot_train_of_a_spec_without_training_is_a_sentence(tmp_path):
    result = invoke("plot", "train", STE, "--output", str(tmp_path / "t.png"))
    assert result.exit_code == 2
    assert "has no train: block" in result.stderr and not (tmp_path / "t.png").exists()


def test_a_negative_range_on_the_command_line(tmp_path):
    result = invoke("plot", "curve", STE, "--range", "-3:3", "--points", "7", "--input", "x",
                    "--output", str(tmp_path / "c.png"))
    assert result.exit_code == 0, result.stderr
    assert "wrote" in result.stdout


def test_the_default_file_name_cannot_leave_the_directory(tmp_path, monkeypatch):
    spec = tmp_path / "s.yaml"
    spec.write_text('name: "../../x/<b> y"\ninputs: {x: 1.0}\noutputs:\n  y: x * x\n')
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert invoke("plot", "curve", str(spec), "--points", "5").exit_code == 0
    assert [p.name for p in (tmp_path / "work").iterdir()] == ["x--b--y-curve.png"]


DIVERGE = """
name: diverge
inputs: {w: [1.0, 2.0]}
outputs: {loss: exp(w * w * 30)}
train: {loss: loss, optimizer: {name: sgd, lr: 1.0}, steps: 3, on_nonfinite: continue}
"""


def diverge_losses() -> list:
    """numpy's own sgd on sum(exp(30 w^2)): overflows to +inf, then NaN."""
    w, losses = np.array([1.0, 2.0]), []
    with np.errstate(all="ignore"):
        for _ in range(3):
            losses.append(np.sum(np.exp(w * w * 30)))
            w = w - 1.0 * 60 * w * np.exp(w * w * 30)
        losses.append(np.sum(np.exp(w * w * 30)))
    return losses


def edge_marks(ax, label: str) -> dict:
    """{kind: (steps, level in axes coordinates, marker)} of a run's edge marks."""
    found = {}
    for line in ax.get_lines():
        name = line.get_label()
        if name.startswith(f"{label}: "):
            assert line.get_transform() == ax.get_xaxis_transform()  # y in axes coordinates
            found[name[len(label) + 2:]] = (list(line.get_xdata()), set(line.get_ydata()),
                                            line.get_marker())
    return found


def test_plot_train_marks_a_diverged_loss_at_the_top_not_at_the_bottom(tmp_path, monkeypatch):
    expected = diverge_losses()
    assert np.isposinf(expected[1]) and np.isposinf(expected[2]) and np.isnan(expected[3])
    (tmp_path / "div.yaml").write_text(DIVERGE)
    (tmp_path / "descent.yaml").write_text(DESCENT.replace("STEPS", "3"))
    drawn = {}
    import gradcli.plot.train as train_module

    def keep(title, runs, units=None, text=None):
        drawn["fig"] = fig = train_figure(title, runs, units, text)
        return fig
    monkeypatch.setattr(train_module, "train_figure", keep)
    result = invoke("plot", "train", str(tmp_path / "div.yaml"), str(tmp_path / "descent.yaml"),
                    "--output", str(tmp_path / "t.png"))
    assert result.exit_code == 0, result.stderr
    (ax,) = drawn["fig"].axes
    np.testing.assert_allclose(lines(ax)["diverge"].get_ydata(), expected[:-1], rtol=1e-12)
    assert edge_marks(ax, "diverge") == {"+inf": ([1, 2], {0.97}, "^")}
    # the loss after the last step (NaN) is the final marker's, marked at the bottom edge
    assert lines(ax)["diverge, final, after 3 steps: NaN"].get_xdata() == [3]
    assert edge_marks(ax, "descent") == {}


def test_train_figure_marks_each_kind_of_non_finite_loss_at_its_edge():
    fig = train_figure("t", [("run", {"loss": {"train": [1.0, -np.inf, np.nan, np.inf, 2.0]}})])
    (ax,) = fig.axes
    # each kind in a lane of its own (-inf and NaN at the bottom, one above the other)
    assert edge_marks(ax, "run") == {"+inf": ([3], {0.97}, "^"), "-inf": ([1], {0.09}, "v"),
                                     "NaN": ([2], {0.03}, "X")}
