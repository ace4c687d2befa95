"""compare with several specs: across backends each spec on its own; otherwise spec against spec.

Expected numbers are numpy written here: d sum(x*x)/dx = 2x, d sum(x**3)/dx = 3x**2,
sgd x <- x - lr * 3x**2.
"""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SQUARE = "name: square\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x * x)\n"
CUBE = "name: cube\ninputs:\n  x: [1.0, 2.0, 3.0, 4.0]\noutputs:\n  y: sum(x * x * x)\n"
TRAIN = "train:\n  loss: y\n  optimizer: {name: sgd, lr: 0.01}\n  steps: 2\n"


@pytest.fixture
def write(tmp_path):
    def write(name, text):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        return str(path)
    return write


def compare(*args):
    return CliRunner().invoke(cli, ["compare", *args], env={"NO_COLOR": "1", "COLUMNS": "160"})


def sgd(x, steps=2, lr=0.01):
    for _ in range(steps):
        x = x - lr * 3 * x ** 2
    return x


def test_across_backends_each_spec_is_compared_on_its_own(write):
    square, cube = write("square", SQUARE), write("cube", CUBE + TRAIN)
    result = compare(square, cube, "--backends", "numpy,torch", "--tolerance", "1e-9",
                     "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["within_tolerance"] is True
    by = {c["spec"]: c for c in doc["comparisons"]}
    assert by["square"]["runs"] == ["numpy", "torch"] and by["square"]["path"] == square
    x3, x4 = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0, 4.0])
    assert by["square"]["rows"][0]["overridden"] == [(2 * x3).tolist()] * 2
    assert by["square"]["rows"][0]["within"] is True and by["square"]["train"] == []
    assert by["cube"]["rows"][0]["overridden"] == [(3 * x4 ** 2).tolist()] * 2
    params = {r["quantity"]: r for r in by["cube"]["train"]}["params.x"]
    assert params["values"] == [pytest.approx(sgd(x4).tolist())] * 2 and params["within"] is True
    table = compare(square, cube, "--backends", "numpy,torch", "--tolerance", "1e-9")
    assert table.exit_code == 0
    assert f"spec square ({square}) across backends" in table.stdout
    assert f"spec cube ({cube}) across backends" in table.stdout


def test_spec_against_spec_a_shape_mismatch_differs(write):
    square, cube = write("square", SQUARE), write("cube", CUBE)
    table = compare(square, cube, "--tolerance", "1e-9")
    assert table.exit_code == 1, table.stdout + table.stderr
    assert "DIFFERS" in table.stdout and "48" in table.stdout  # cube's 4th element, 3 * 4**2
    result = compare(square, cube, "--tolerance", "1e-9", "--format", "json")
    assert result.exit_code == 1, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["runs"] == ["square", "cube"]
    assert doc["rows"][0]["within"] is False and doc["within_tolerance"] is False


def test_a_spec_that_trains_beside_one_that_does_not_is_not_a_failure(write):
    still, trains = write("still", CUBE), write("trains", CUBE.replace("cube", "trains") + TRAIN)
    result = compare(still, trains, "--tolerance", "0", "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["within_tolerance"] is True
    params = {r["quantity"]: r for r in doc["train"]}["params.x"]
    assert params["values"][0] == "not trained"
    assert params["values"][1] == pytest.approx(sgd(np.array([1.0, 2.0, 3.0, 4.0])).tolist())
    assert params["within"] is None
    table = compare(still, trains, "--tolerance", "0")
    assert table.exit_code == 0 and "not trained" in table.stdout and "DIFFERS" not in table.stdout


def test_without_a_tolerance_nothing_is_judged(tmp_path):
    square, cube = tmp_path / "square.yaml", tmp_path / "cube.yaml"
    square.write_text("inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n")
    cube.write_text("inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x * x)\n")
    result = CliRunner().invoke(cli, ["compare", str(square), str(cube), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["rows"][0]["max_diff"] == 8.0  # 3x^2 - 2x at x = 2
    assert doc["rows"][0]["within"] is None and doc["within_tolerance"] is None
