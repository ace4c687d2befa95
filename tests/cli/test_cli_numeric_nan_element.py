"""run --format json on review8's reproducer (F1): y = sqrt(x) at x = [-1, 0.5, 2]. Only
y[0] is NaN, so only the numeric derivative of x[0] is; it was NaN at every element, and
the summary's numeric_max_abs_diff with it.

Oracle: numpy central differences of each element on its own, (sqrt(x + h) - sqrt(x - h)) /
2h with gradcli's relative step h = eps ** (1/3) * max(|x|, 0.001).
"""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = "name: nan-other\ninputs:\n  x: [-1.0, 0.5, 2.0]\noutputs:\n  y: sqrt(x)\n"


def test_run_json_numeric_is_nan_only_at_the_nan_element(tmp_path):
    spec = tmp_path / "nanother.yaml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, ["run", str(spec), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    x = np.array([-1.0, 0.5, 2.0])
    h = np.finfo(np.float64).eps ** (1 / 3) * np.maximum(np.abs(x), 1e-3)
    with np.errstate(invalid="ignore"):
        expected = (np.sqrt(x + h) - np.sqrt(x - h)) / ((x + h) - (x - h))
    numeric = doc["gradients"]["y"]["x"]["numeric"]
    assert numeric[0] == "NaN"
    np.testing.assert_allclose(numeric[1:], expected[1:], rtol=1e-9)
    assert abs(expected[1] - 0.70710678118) < 1e-9 and abs(expected[2] - 0.35355339059) < 1e-9
    gap = doc["summary"]["y"]["x"]["numeric_max_abs_diff"]
    assert isinstance(gap, float) and gap < 1e-8
