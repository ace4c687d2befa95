"""plot curve --element: which element of the swept input's gradients is drawn. By default the
one whose overridden gradient is largest in magnitude at the spec's values (element 0 of a
network's first weights may multiply a pixel that is always 0, and draw nothing but zeros).

Expected series are numpy written here: y = w * x * x weighed by grad_ys g has gradient
g * w * 2x per element; sum(a * x * x) has 2 * a * x.
"""
import matplotlib
import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.curve import LARGEST, check_element, parse_element, sweep
from gradcli.errors import GradcliError
from gradcli.plot.curve import curve_figure
from gradcli.spec import load_spec_text

matplotlib.use("Agg")

SCALED = """
name: scaled
inputs: {x: [0.5, 2.0], w: [3.0, -1.0]}
grad_ys: {y: [2.0, 5.0]}
outputs:
  y: w * x * x
"""
A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]])
X = np.array([[1.0, 2.0, 0.5], [-1.0, 0.0, 0.75]])
MATRIX = f"""
name: matrix
inputs:
  x: {X.tolist()}
  a: {A.tolist()}
wrt: [x]
outputs:
  y: sum(a * x * x)
"""


def test_the_default_element_has_the_largest_overridden_gradient():
    curve = sweep(load_spec_text(SCALED, path="s.yaml"), "x", span=(-1.0, 1.0), points=5)
    g, w, x = np.array([2.0, 5.0]), np.array([3.0, -1.0]), np.array([0.5, 2.0])
    k = int(np.argmax(np.abs(g * w * 2 * x)))  # [6, -20]: element 1
    xs = np.linspace(-1, 1, 5)
    assert (curve.element, curve.output, curve.chosen) == (f"[{k}]", f"y[{k}]", LARGEST)
    np.testing.assert_allclose(curve.forward, w[k] * xs * xs)
    np.testing.assert_allclose(curve.true, g[k] * w[k] * 2 * xs)
    np.testing.assert_allclose(curve.overridden, curve.true)
    np.testing.assert_allclose(curve.numeric, g[k] * w[k] * 2 * xs, atol=1e-6)


def test_a_matrix_input_default_and_chosen_elements():
    exp = load_spec_text(MATRIX, path="m.yaml")
    xs = np.linspace(-2, 2, 9)
    largest = np.unravel_index(np.argmax(np.abs(2 * A * X)), A.shape)  # 2*(-3)*0.75 = -4.5
    assert largest == (1, 2)
    curve = sweep(exp, "x", span=(-2.0, 2.0), points=9)
    assert (curve.element, curve.output, curve.chosen) == ("[1, 2]", "y", LARGEST)
    rest = np.sum(A * X * X) - A[1, 2] * X[1, 2] ** 2  # the other elements keep the spec's x
    np.testing.assert_allclose(curve.forward, rest + A[1, 2] * xs * xs)
    np.testing.assert_allclose(curve.true, 2 * A[1, 2] * xs)
    np.testing.assert_allclose(curve.numeric, 2 * A[1, 2] * xs, atol=1e-6)
    chosen = sweep(exp, "x", span=(-2.0, 2.0), points=9, element=(0, 1))
    assert (chosen.element, chosen.chosen) == ("[0, 1]", "")
    np.testing.assert_allclose(chosen.true, 2 * A[0, 1] * xs)
    np.testing.assert_allclose(chosen.numeric, 2 * A[0, 1] * xs, atol=1e-6)


def test_the_title_says_which_element_and_why():
    curve = sweep(load_spec_text(MATRIX, path="m.yaml"), "x", span=(-2.0, 2.0), points=9)
    top, bottom = curve_figure(curve).axes
    assert top.get_title().replace("\n", " ") == (
        "y along x[1, 2] (backend numpy) x[1, 2] swept (the largest |overridden gradient| at the "
        "spec's values); the other elements of x keep the spec's values")
    assert "∂y/∂x[1, 2]" in bottom.get_ylabel()
    assert bottom.get_xlabel() == "x[1, 2]: input value swept"


NETWORK = """
name: layer
inputs:
  W: [[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]]
  v: {value: [1.0, -2.0, 0.5], trainable: false}
wrt: [W]
outputs:
  loss: sum(tanh(matmul(W, reshape(v, [3, 1]))))
"""


def test_a_weight_matrix_moves_one_weight_and_the_lower_panel_is_the_upper_ones_slope():
    """note6's leftover: every weight set to the same x drew a flat, odd curve whose slope was
    not the gradient drawn below it. torch gives the slice and its derivative here."""
    import torch

    curve = sweep(load_spec_text(NETWORK, path="n.yaml"), "W", span=(-2.0, 2.0), points=41)
    W0 = np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]])
    v = torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
    k = tuple(int(i) for i in curve.element.strip("[]").split(", "))
    forward, slope = [], []
    for t in np.linspace(-2, 2, 41):
        W = torch.tensor(W0, requires_grad=True)
        with torch.no_grad():
            W[k] = t
        loss = torch.tanh(W @ v).sum()
        loss.backward()
        forward.append(loss.item())
        slope.append(W.grad[k].item())
    np.testing.assert_allclose(curve.forward, forward, rtol=1e-12)
    np.testing.assert_allclose(curve.true, slope, rtol=1e-12)
    np.testing.assert_allclose(curve.numeric, slope, atol=1e-6)
    assert np.ptp(curve.forward) > 0.1  # not flat


@pytest.mark.parametrize("text, index", [("3", (3,)), ("0,5", (0, 5)), ("[1, 2]", (1, 2)),
                                         (" 4 ", (4,))])
def test_element_text(text, index):
    assert parse_element(text) == index


@pytest.mark.parametrize("text", ["", "a", "-1", "1,,2", "1.5"])
def test_a_bad_element_is_a_sentence(text):
    with pytest.raises(GradcliError, match="--element must be an index of the input"):
        parse_element(text)


def test_an_element_outside_the_shape_is_a_sentence():
    with pytest.raises(GradcliError, match=r"--element 2,0 is not an element of input 'x', of "
                                           r"shape \(2, 3\): give 2 indices within 0..1,0..2"):
        check_element("x", (2, 3), (2, 0))
    with pytest.raises(GradcliError, match=r"give 1 index within 0..3"):
        check_element("x", (4,), (0, 1))
    with pytest.raises(GradcliError, match="'s' is a scalar"):
        check_element("s", (), (0,))


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_plot_curve_element_on_the_command_line(tmp_path):
    spec = tmp_path / "m.yaml"
    spec.write_text(MATRIX)
    target = tmp_path / "c.png"
    result = invoke("plot", "curve", str(spec), "--element", "0,1", "--points", "5",
                    "--output", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = invoke("plot", "curve", str(spec), "--element", "3", "--output", str(tmp_path / "b.png"))
    assert bad.exit_code == 2
    assert "--element 3 is not an element of input 'x', of shape (2, 3)" in bad.stderr
    assert "Traceback" not in bad.output and not (tmp_path / "b.png").exists()
    assert "--element" in invoke("plot", "curve", "--help").stdout
