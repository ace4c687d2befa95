"""plot curve's numeric derivative where another element of the output is NaN at every point
(review8 F1): x[0] = -1 keeps y[0] = sqrt(-1) + log(-1) NaN while x[2] is swept; the numeric
derivative of x[2] is NaN only where its own element is (x <= 0), not over the whole range.

Oracles: numpy central differences of the swept element's own output element, with the
curve's absolute step 1e-6; torch's autograd for the true derivative.
"""
import numpy as np
import pytest
import torch
from test_plot_figures import lines

from gradcli.curve import sweep
from gradcli.plot.curve import curve_figure
from gradcli.spec import load_spec_text

SQRT_LOG = """name: sqrt-log
inputs:
  x: [-1.0, 0.5, 2.0]
register:
  G: dy * 2.0
override_map:
  Sqrt: G
outputs:
  y: sqrt(x) + log(x)
"""


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_numeric_is_nan_only_where_the_swept_element_is(backend):
    xs = np.linspace(-2.0, 2.0, 9)
    curve = sweep(load_spec_text(SQRT_LOG, path="sqrtlog.yaml"), "x", backend=backend,
                  span=(-2.0, 2.0), points=9, element=(2,))
    h = 1e-6
    with np.errstate(all="ignore"):
        numeric = (np.sqrt(xs + h) + np.log(xs + h) - np.sqrt(xs - h) - np.log(xs - h)) / (2 * h)
    assert np.isnan(numeric[xs <= 0]).all() and np.isfinite(numeric[xs > 0]).all()
    np.testing.assert_allclose(curve.numeric, numeric, rtol=1e-6)  # NaN where numeric is NaN
    true = []
    for x in xs:
        t = torch.tensor([-1.0, 0.5, x], dtype=torch.float64, requires_grad=True)
        torch.sum(torch.sqrt(t) + torch.log(t)).backward()
        true.append(t.grad[2].item())
    np.testing.assert_allclose(curve.true, true, rtol=1e-12)
    positive = xs > 0
    np.testing.assert_allclose(curve.numeric[positive], curve.true[positive], rtol=1e-5)
    # the figure marks NaN only where the numeric derivative is NaN
    _, bottom = curve_figure(curve).axes
    marked = lines(bottom)["numeric derivative: NaN"].get_xdata()
    np.testing.assert_array_equal(marked, xs[xs <= 0])
