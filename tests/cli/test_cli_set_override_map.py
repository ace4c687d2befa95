"""--set override_map.<op>=G replaces the spec's entry for that op, matched as op types are."""
import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

STE = str(Path(__file__).parents[2] / "experiments" / "ste_sign_quantize_grad.yaml")


def test_set_override_map_sign_replaces_the_specs_Sign_entry():
    result = CliRunner().invoke(cli, ["run", STE, "--set", "override_map.sign=identity",
                                      "--format", "json"])
    assert result.exit_code == 1, result.stderr  # the spec's expect was written for QuantizeGrad
    assert "overridden twice" not in result.stderr
    doc = json.loads(result.stdout)
    # identity's gradient of sum(sign(x) * w) with respect to x is w itself
    w = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.float64)
    assert doc["gradients"]["y"]["x"]["overridden"] == w.tolist()
    assert [(o["op"], o["gradient"]) for o in doc["overrides"]] == [("sign", "identity")]


def test_set_override_map_matches_case_and_underscores(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("inputs:\n  x: [1.0, -2.0]\noutputs:\n  y: sum(reverse_gradient(x) * x)\n"
                    "override_map:\n  ReverseGradient: identity\n")
    result = CliRunner().invoke(cli, ["run", str(spec), "--set", "override_map.REVERSE_gradient=identity",
                                      "--format", "json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["overrides"]) == 1
    x = np.array([1.0, -2.0])
    assert doc["gradients"]["y"]["x"]["overridden"] == (2 * x).tolist()  # d(x*x) with identity
