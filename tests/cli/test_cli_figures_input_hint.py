"""`plot curve --input NAME` with a misspelt input gives "did you mean", as every other
unknown name does, and exits 2 before anything runs."""
from __future__ import annotations

from click.testing import CliRunner

from gradcli.cli import cli

SPEC = "inputs:\n  weights: [0.5, -1.5]\n  x: [1.0, 2.0]\noutputs:\n  y: sum(sign(weights) * x)\n"


def test_a_misspelt_input_gets_a_did_you_mean(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC)
    result = CliRunner().invoke(cli, ["plot", "curve", str(path), "--input", "wieghts",
                                      "--output", str(tmp_path / "c.png")])
    assert result.exit_code == 2
    assert "the spec has no input 'wieghts' (inputs: weights, x) (did you mean 'weights'?)" \
        in " ".join(result.output.split())
    assert not (tmp_path / "c.png").exists()
