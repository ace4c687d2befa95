"""run --format json's `numeric_seeds`: the seed the backend drew each directional numeric
check's directions with (null for a full or skipped check), enough to redo the check.

The oracle redraws the directions with numpy from the reported seed (unit normal draws of
np.random.default_rng(seed), as docs/spec.md states) and projects the true gradient of
sum(x * x) onto them: the reported numeric gradient must be that projection.
"""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """name: seeds
seed: 7
inputs:
  x: {normal: [0, 1], shape: [3000]}
  w: [1.0, 2.0, 3.0]
outputs:
  y: sum(x * x) + sum(w * w)
"""


def run_json(tmp_path, *extra):
    spec = tmp_path / "seeds.yaml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, ["run", str(spec), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def projection(gradient, seed, count=16):
    basis = np.random.default_rng(seed).standard_normal((count, gradient.size))
    basis /= np.linalg.norm(basis, axis=1, keepdims=True)
    slopes = basis @ gradient
    coeffs = np.linalg.solve(basis @ basis.T, slopes)
    return coeffs @ basis


def test_a_directional_check_reports_its_seed_and_the_seed_redoes_it(tmp_path):
    doc = run_json(tmp_path)
    assert doc["numeric_seeds"] == {"y": {"x": 7, "w": None}}  # w: 3 elements, a full check
    assert doc["gradients"]["y"]["x"]["numeric_kind"] == "directional"
    true = np.asarray(doc["gradients"]["y"]["x"]["true"])  # 2x: the inputs are not in values
    numeric = np.asarray(doc["gradients"]["y"]["x"]["numeric"])
    np.testing.assert_allclose(numeric, projection(true, 7), atol=1e-6)
    assert not np.allclose(numeric, projection(true, 8), atol=1e-3)  # the seed matters


def test_without_a_numeric_check_every_seed_is_null(tmp_path):
    doc = run_json(tmp_path, "--no-numeric")
    assert doc["numeric_seeds"] == {"y": {"x": None, "w": None}}


def test_csv_and_markdown_carry_the_seeds_as_json_does(tmp_path):
    import csv
    import io

    spec = tmp_path / "seeds.yaml"
    spec.write_text(SPEC)
    table = CliRunner().invoke(cli, ["run", str(spec), "--format", "csv"])
    assert table.exit_code == 0, table.output
    rows = [r for r in csv.DictReader(io.StringIO(table.stdout)) if r["section"] == "numeric_seeds"]
    assert [(r["output"], r["input"], r["step"], r["kind"], r["element"], r["value"])
            for r in rows] == [("y", "x", "", "seed", "", "7"), ("y", "w", "", "seed", "", "")]
    md = CliRunner().invoke(cli, ["run", str(spec), "--format", "markdown"]).stdout
    table = md[md.index("### gradients of `y`"):].split("\n\n")[1].splitlines()
    assert table[0] == "| input | overridden | true | numeric | numeric_kind | numeric_seed |"
    assert [line.split(" | ")[-2:] for line in table[2:]] == [["directional", "7 |"],
                                                               ["full", "null |"]]
