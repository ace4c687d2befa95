"""compare shows no numeric gradient (table, JSON, CSV, markdown), so it computes none: on a
framework backend the finite differences cost far more than everything compare shows."""
import json

from click.testing import CliRunner

from gradcli.backends.program import Program
from gradcli.cli import cli

SQUARE = "name: square\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x * x)\n"
CUBE = "name: cube\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x * x * x)\n"


def _no_finite_differences(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError("compare computed finite differences it never shows")
    monkeypatch.setattr(Program, "numeric", refuse)


def test_compare_computes_no_finite_differences(tmp_path, monkeypatch):
    _no_finite_differences(monkeypatch)
    square, cube = tmp_path / "square.yaml", tmp_path / "cube.yaml"
    square.write_text(SQUARE)
    cube.write_text(CUBE)
    result = CliRunner().invoke(cli, ["compare", str(square), str(cube), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # d sum(x*x)/dx = 2x, d sum(x**3)/dx = 3x**2, written here with the numbers
    assert doc["rows"][0]["overridden"] == [[2.0, 4.0, 6.0], [3.0, 12.0, 27.0]]
    assert "numeric" not in json.dumps(doc)


def test_compare_across_backends_computes_no_finite_differences(tmp_path, monkeypatch):
    _no_finite_differences(monkeypatch)
    square = tmp_path / "square.yaml"
    square.write_text(SQUARE)
    result = CliRunner().invoke(cli, ["compare", str(square), "--backends", "numpy,torch",
                                      "--tolerance", "1e-12"])
    assert result.exit_code == 0, result.output
