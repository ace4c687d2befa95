"""compare --tolerance inf (or 1e400, which is inf as a float) in json, csv and markdown
(tryout7 finding 3: "internal error: Out of range float values are not JSON compliant").

The tolerance is written "Infinity", as every non-finite number of the JSON output is; an
infinite tolerance admits any finite gap and still no NaN against a number. The gradients
are checked against numpy, computed here."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
X = np.array([1.0, 4.0])
SPEC = "name: {name}\ninputs:\n  x: [1.0, 4.0]\noutputs:\n  y: {y}\n"
SPECS = {"cube": "sum(x ** 3.0)",                                  # 3x^2: [3, 48]
         "line": "sum(5.0 * x)",                                    # [5, 5]: a finite gap
         "nan": "sum(x ** 3.0) + sum(0.0 * log(x - 4.0))"}          # 0 * 1/0 at x = 4: NaN


def compare(tmp_path, names, tolerance, fmt):
    paths = []
    for name in names:
        path = tmp_path / f"{name}.yaml"
        path.write_text(SPEC.format(name=name, y=SPECS[name]))
        paths.append(str(path))
    return CliRunner().invoke(cli, ["compare", *paths, "--tolerance", tolerance, "--format", fmt],
                              env=ENV)


@pytest.mark.parametrize("tolerance", ["inf", "1e400"])
def test_json_writes_an_infinite_tolerance_as_infinity_and_judges_with_it(tmp_path, tolerance):
    finite = compare(tmp_path, ["cube", "line"], tolerance, "json")
    assert finite.exit_code == 0, finite.output
    doc = json.loads(finite.output)
    assert doc["tolerance"] == "Infinity" and doc["within_tolerance"] is True
    row, = doc["rows"]
    np.testing.assert_array_equal(row["overridden"], [3 * X ** 2, np.full(2, 5.0)])
    assert row["within"] is True

    with np.errstate(divide="ignore", invalid="ignore"):
        nan_side = 3 * X ** 2 + 0.0 / (X - 4.0)
    assert np.isnan(nan_side[1])  # the oracle: NaN against 48 at x = 4
    broken = compare(tmp_path, ["cube", "nan"], tolerance, "json")
    assert broken.exit_code == 1, broken.output
    doc = json.loads(broken.output)
    assert doc["tolerance"] == "Infinity" and doc["within_tolerance"] is False
    assert doc["rows"][0]["overridden"][1] == [3.0, "NaN"]


def test_csv_and_markdown_hold_the_same_infinite_tolerance(tmp_path):
    csv = compare(tmp_path, ["cube", "line"], "inf", "csv")
    assert csv.exit_code == 0, csv.output
    assert ",,compare,,,,,,,,tolerance,,Infinity\n" in csv.output.replace("\r\n", "\n")
    markdown = compare(tmp_path, ["cube", "line"], "inf", "markdown")
    assert markdown.exit_code == 0, markdown.output
    assert markdown.output.startswith("tolerance Infinity · within_tolerance true")


# audit10 D: dy/dx[0] is c[0], an untrainable input; an infinite gap is outside every tolerance
CONSTANT = ("name: {name}\ninputs:\n  x: [1.0, 2.0]\n"
            "  c: {{value: [{c0}, 3.0], trainable: false}}\noutputs:\n  y: sum(x * c)\n")


def compare_constants(tmp_path, values, extra=()):
    paths = []
    for i, c0 in enumerate(values):
        path = tmp_path / f"c{i}.yaml"
        path.write_text(CONSTANT.format(name=f"c{i}", c0=c0))
        paths.append(str(path))
    return CliRunner().invoke(cli, ["compare", *paths, "--format", "json", *extra], env=ENV)


@pytest.mark.parametrize("values", [(".inf", "-.inf"), (".inf", "1.0"), ("-.inf", "1e308"),
                                    ("1.0", ".inf")])
@pytest.mark.parametrize("tolerance", ["inf", "1e300"])
def test_an_infinity_against_another_value_is_outside_every_tolerance(tmp_path, values, tolerance):
    result = compare_constants(tmp_path, values, ["--tolerance", tolerance])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert doc["within_tolerance"] is False
    row, = [r for r in doc["rows"] if r["input"] == "x"]
    expected = [float(v.replace(".inf", "inf")) for v in values]  # the oracle: d(x . c)/dx = c
    assert [r[0] if not isinstance(r[0], str) else float(r[0].replace("Infinity", "inf"))
            for r in row["overridden"]] == expected
    assert row["within"] is False


def test_equal_infinities_and_finite_gaps_that_overflow_pass_an_infinite_tolerance(tmp_path):
    same = compare_constants(tmp_path, [".inf", ".inf"], ["--tolerance", "inf"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.output)["within_tolerance"] is True
    # 1.7e308 - (-1.7e308) overflows to inf in float64, but the gap between two numbers is finite
    wide = compare_constants(tmp_path, ["1.7e308", "-1.7e308"], ["--tolerance", "inf"])
    assert wide.exit_code == 0, wide.output
    assert json.loads(wide.output)["within_tolerance"] is True
