"""The curve figure's data against numpy: sign with the hard-tanh straight-through estimator."""
import numpy as np
import pytest

from gradcli.curve import default_range, parse_range, sweep
from gradcli.errors import GradcliError
from gradcli.plot import marks
from gradcli.spec import load_spec_text

SIGN_STE = """
name: sign-hardtanh-ste
inputs:
  x: [-1.5, -0.5, 0.5, 1.5]
override_map:
  Sign: hardtanh
outputs:
  y: sign(x)
"""


def expected_sign_ste(xs, h=1e-6):
    """sign's forward, its true derivative (0), hard-tanh's gradient and central differences."""
    return (np.sign(xs), np.zeros_like(xs), (np.abs(xs) <= 1).astype(float),
            (np.sign(xs + h) - np.sign(xs - h)) / (2 * h))


@pytest.mark.parametrize("backend", ["numpy", "torch", "jax", "tensorflow"])
def test_sweep_series_are_the_gradients_numpy_expects(backend):
    exp = load_spec_text(SIGN_STE, path="ste.yaml")
    points = 401 if backend == "numpy" else 41  # eager frameworks build the spec per point
    curve = sweep(exp, "x", backend=backend, span=(-3.0, 3.0), points=points)
    xs = np.linspace(-3, 3, points)
    forward, true, overridden, numeric = expected_sign_ste(xs)
    np.testing.assert_array_equal(curve.x, xs)
    np.testing.assert_array_equal(curve.forward, forward)
    np.testing.assert_array_equal(curve.true, true)
    np.testing.assert_array_equal(curve.overridden, overridden)
    np.testing.assert_allclose(curve.numeric, numeric, rtol=1e-6, atol=1e-6)
    assert numeric[points // 2] == pytest.approx(1e6)  # the jump at 0 is on the grid
    # hard-tanh's gradient at the spec's x is [0, 1, 1, 0]: the first largest is element 1
    assert (curve.output, curve.input, curve.element) == ("y[1]", "x", "[1]")


def test_the_other_inputs_keep_their_values_and_grad_ys_weighs_the_gradient():
    spec = """
name: scaled
inputs: {x: [0.5, 2.0], w: [3.0, -1.0]}
grad_ys: {y: [2.0, 5.0]}
outputs:
  y: w * x * x
"""
    curve = sweep(load_spec_text(spec, path="s.yaml"), "x", span=(-1.0, 1.0), points=5,
                  element=(0,))
    xs = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(curve.forward, 3.0 * xs * xs)      # w[0] = 3 kept
    np.testing.assert_allclose(curve.true, 2.0 * 3.0 * 2 * xs)    # grad_ys[0] * dy0/dx0
    np.testing.assert_allclose(curve.overridden, curve.true)
    np.testing.assert_allclose(curve.numeric, 2.0 * 3.0 * 2 * xs, atol=1e-6)


def test_default_range_is_the_inputs_min_and_max_widened():
    assert default_range([-1.5, -0.5, 0.5, 1.5]) == (-2.25, 2.25)
    assert default_range(2.0) == (1.5, 2.5)
    assert default_range([np.nan, 1.0, np.inf, 3.0]) == (0.5, 3.5)


@pytest.mark.parametrize("text", ["3:1", "a:b", "1", "-inf:0", ""])
def test_a_bad_range_is_a_sentence(text):
    with pytest.raises(GradcliError, match="--range must be LOW:HIGH"):
        parse_range(text)


def test_an_input_outside_wrt_or_unknown_is_refused():
    spec = "name: s\ninputs: {x: [1.0, 2.0], k: [1, 2]}\nwrt: [x]\noutputs:\n  y: x * 2.0\n"
    exp = load_spec_text(spec, path="s.yaml")
    with pytest.raises(GradcliError, match="'k' is not in wrt"):
        sweep(exp, "k")
    with pytest.raises(GradcliError, match="no input 'z'"):
        sweep(exp, "z")


def test_jumps_are_found_where_the_forward_steps_and_nowhere_on_smooth_or_kinked_curves():
    xs = np.linspace(-3, 3, 401)
    assert list(np.flatnonzero(marks.jumps(np.sign(xs)))) == [199, 200]  # -1 -> 0 -> 1
    # 0.1 + 0.028k crosses 1 at k = 33 and 2 at k = 68: the segments before them jump
    assert list(np.flatnonzero(marks.jumps(np.floor(np.linspace(0.1, 2.9, 101))))) == [32, 67]
    assert not marks.jumps(xs ** 3).any()
    assert not marks.jumps(np.maximum(xs, 0)).any()
    assert not marks.jumps(np.tanh(4 * xs)).any()
    assert not marks.jumps(1e-15 * np.sin(xs)).any()  # rounding noise around 0 is not a step


def test_broken_puts_a_gap_inside_each_jump():
    bx, by = marks.broken([0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 5.0, 5.0])
    np.testing.assert_array_equal(bx, [0.0, 1.0, np.nan, 2.0, 3.0])
    np.testing.assert_array_equal(by, [0.0, 0.0, np.nan, 5.0, 5.0])


def test_a_matrix_input_is_labelled_with_the_whole_index_of_the_element_plotted():
    from gradcli.plot.curve import curve_figure
    from gradcli.spec import load_spec_text
    spec = "name: m\ninputs: {W: [[0.5, -1.0], [0.25, 2.0]]}\noutputs:\n  y: W * W\n"
    curve = sweep(load_spec_text(spec, path="m.yaml"), "W", span=(-1.0, 1.0), points=5)
    # the default element: 2W at the spec's W is largest at [1, 1] (4.0)
    assert (curve.output, curve.element) == ("y[1, 1]", "[1, 1]")
    top, bottom = curve_figure(curve).axes
    assert bottom.get_ylabel() == "∂y[1, 1]/∂W[1, 1] (gradient)"
    np.testing.assert_allclose(bottom.get_lines()[0].get_ydata(), 2 * np.linspace(-1, 1, 5))
    assert bottom.get_legend().get_bbox_to_anchor().y0 < bottom.get_window_extent().y0  # below


def test_the_datas_features_are_refused_as_data_not_as_a_wrt_slip(tmp_path):
    from blobs_fixture import blobs_spec
    from click.testing import CliRunner

    from gradcli.cli import cli
    spec = blobs_spec(tmp_path)
    result = CliRunner().invoke(cli, ["plot", "curve", str(spec), "--input", "X",
                                      "--output", str(tmp_path / "c.png")])
    assert result.exit_code == 2 and not (tmp_path / "c.png").exists()
    assert "'X' is the data's features" in result.stderr and "never trained" in result.stderr
    assert "Traceback" not in result.stderr
