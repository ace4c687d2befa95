"""What expect takes as an expected number (tryout7 finding 5): NaN and inf in
train.final as in values (a diverging run can be expected to diverge), no quoted numeral
("6" is a string) anywhere, and no boolean where a gradient or a parameter is expected.
Each expected value is computed here with numpy."""
import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

X = np.array([0.0, 4.0, 1.0])
Y = np.sum(np.sqrt(X) * 2.0)                       # 6
DY_DX1 = 1.0 / np.sqrt(X[1])                       # d y / d x[1] = 0.5
VALUES = """\
name: e
inputs:
  x: [0.0, 4.0, 1.0]
let:
  m: x > 1.0
outputs:
  y: sum(sqrt(x) * 2.0)
wrt: [x]
expect:
{expect}
"""
W = 1.0e200
DIVERGING = """\
name: d
inputs:
  w: [1.0e+200]
outputs:
  loss: sum(w * w) {rest}
train:
  loss: loss
  optimizer: {{name: sgd, lr: 0.1}}
  steps: 3
expect:
  train:
    final: {{loss: {final}}}
"""


def run(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return CliRunner().invoke(cli, ["run", str(path)], env={"NO_COLOR": "1", "COLUMNS": "200"})


@pytest.mark.parametrize("rest,final,code", [("- sum(w * w)", ".nan", 0), ("", ".inf", 0),
                                             ("- sum(w * w)", "'NaN'", 0), ("- sum(w * w)", "1.0", 1)])
def test_a_final_loss_may_be_expected_nan_or_inf_as_a_value_may(tmp_path, rest, final, code):
    with np.errstate(over="ignore", invalid="ignore"):
        loss = np.float64(W) * W - (np.float64(W) * W if rest else 0.0)
    assert np.isnan(loss) if rest else np.isposinf(loss)  # where training stops, at step 0
    result = run(tmp_path, DIVERGING.format(rest=rest, final=final))
    assert result.exit_code == code, result.output
    if code:
        assert "train.final.loss: expected 1, got NaN" in result.output


@pytest.mark.parametrize("expect,place", [
    ('  values: {y: "6"}', "10:15: expect.values.y"),
    ("  gradients: {y: {x: [inf, '0.5', 1.0]}}", "10:28: expect.gradients.y.x"),
])
def test_a_quoted_numeral_is_refused_where_a_number_is_expected(tmp_path, expect, place):
    assert Y == 6 and DY_DX1 == 0.5  # the numbers are right: only their quotes are wrong
    result = run(tmp_path, VALUES.format(expect=expect))
    assert result.exit_code == 2, result.output
    assert f"spec.yaml:{place}: expected a number, got the string" in result.output
    assert "(quoted)" in result.output


def test_a_boolean_is_refused_for_a_gradient_and_taken_for_a_boolean_value(tmp_path):
    result = run(tmp_path, VALUES.format(expect="  gradients: {y: {x: [true, 0.5, 1.0]}}"))
    assert result.exit_code == 2, result.output
    assert "expect.gradients.y.x: expected a number, got true (a boolean)" in result.output
    mask = (X > 1.0).tolist()  # [False, True, False]
    grads = [np.inf, DY_DX1, 1.0]
    written = "[" + ", ".join(str(v).lower() for v in mask) + "]"
    result = run(tmp_path, VALUES.format(expect=f"  values: {{y: {Y:g}, m: {written}}}\n"
                                                f"  gradients: {{y: {{x: [.inf, {grads[1]}, 1.0]}}}}"))
    assert result.exit_code == 0, result.output
    result = run(tmp_path, VALUES.format(expect='  values: {y: "NaN"}'))  # JSON's spelling
    assert result.exit_code == 1 and "values.y: expected NaN, got 6" in result.output, result.output
