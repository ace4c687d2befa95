"""plot curve --of NAME: the output drawn (tryout12 section 4: only the spec's first output was
drawn, with no option to pick another, so a gradient-reversal path in output z never was).

Expected series are numpy written here: y = sum(x * x) has gradient 2 x, z = sum(3 x) has 3;
element 1 of x takes each value t of the range, the other elements keep the spec's values.
"""
import matplotlib
import numpy as np
import pytest
from click.testing import CliRunner

import gradcli.plot.curve as curve_module
from gradcli.cli import cli

matplotlib.use("Agg")

X = np.array([0.5, -1.0, 2.0])
SPEC = f"""
name: two-outputs
inputs:
  x: {X.tolist()}
outputs:
  y: sum(x * x)
  z: sum(3.0 * x)
"""


@pytest.fixture
def drawn(monkeypatch):
    """The Figure the command draws (the command saves and closes it; the test keeps it)."""
    kept = {}
    figure = curve_module.curve_figure

    def keep(data, text=None):
        kept["fig"] = fig = figure(data, text)
        return fig
    monkeypatch.setattr(curve_module, "curve_figure", keep)
    return kept


def plot(tmp_path, *args):
    spec = tmp_path / "two.yaml"
    spec.write_text(SPEC)
    return CliRunner().invoke(cli, ["plot", "curve", str(spec), "--element", "1", "--range",
                                    "-2:2", "--points", "9", *args])


def series(fig) -> dict:
    top, bottom = fig.axes
    return {line.get_label(): np.asarray(line.get_ydata(), dtype=np.float64)
            for ax in (top, bottom) for line in ax.get_lines()}


def expected(output: str, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The output's value and its derivative along element 1 of x, with numpy."""
    x = np.tile(X, (len(t), 1))
    x[:, 1] = t
    if output == "y":
        return np.sum(x * x, axis=1), 2 * t
    return np.sum(3.0 * x, axis=1), np.full_like(t, 3.0)


@pytest.mark.parametrize("args, output", [((), "y"), (("--of", "y"), "y"), (("--of", "z"), "z")])
def test_the_output_drawn_is_the_one_named_or_the_first(tmp_path, drawn, args, output):
    result = plot(tmp_path, *args, "--output", str(tmp_path / "c.png"))
    assert result.exit_code == 0, result.output
    fig = drawn["fig"]
    t = np.linspace(-2.0, 2.0, 9)
    value, slope = expected(output, t)
    lines = series(fig)
    np.testing.assert_allclose(lines[f"forward {output}"], value, rtol=1e-12)
    np.testing.assert_allclose(lines["true derivative"], slope, rtol=1e-12)
    np.testing.assert_allclose(lines["overridden gradient (used by training)"], slope, rtol=1e-12)
    np.testing.assert_allclose(lines["numeric derivative (central differences)"], slope,
                               rtol=1e-6, atol=1e-6)
    top, bottom = fig.axes
    assert top.get_title().startswith(f"{output} along x[1] (backend numpy)")
    assert f"∂{output}/∂x[1]" in bottom.get_ylabel()
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unknown_output_names_the_outputs_and_exits_2(tmp_path):
    target = tmp_path / "b.png"
    for name, hint in (("q", ""), ("Z", "; did you mean 'z'?")):
        result = plot(tmp_path, "--of", name, "--output", str(target))
        assert result.exit_code == 2, result.output
        assert f"--of {name}: the spec has no output {name!r} (outputs: y, z){hint}" in result.stderr
        assert "Traceback" not in result.output and not target.exists()


def test_the_help_names_the_option():
    help_text = CliRunner().invoke(cli, ["plot", "curve", "--help"]).stdout
    assert "--of NAME" in help_text and "first output" in help_text
