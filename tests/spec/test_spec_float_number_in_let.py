"""A float number held in a let is the bare number it holds (review12 item 2).

At run time `let: {two: 2.0}` is a number, converted to the dtype beside it: `k + two` with k
int64 is refused as `k + 2.0` is (TensorFlow: tf.constant([1, 2], tf.int64) + 2.0 -> "Cannot
convert 2.0 to EagerTensor of dtype int64"). The loader sees through the let name too, so
`gradcli check` refuses it at the use's place, not only `run`; an integer number there stays
int64, and a float tensor beside the float number is fine.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

INPUTS = "inputs:\n  x: [1.0, 2.0]\n  k: {value: [1, 2], dtype: int64}\n"
SAID = ("of an int64 tensor and the float number {shown} is not defined, as TensorFlow "
        "converts no float number to int64")


@pytest.mark.parametrize("lets, use, op, shown, place", [
    ("  two: 2.0\n", "k + two", "add", "two (= 2.0)", (7, 8)),
    ("  two: '[2.0, 1]'\n", "k * two", "mul", "two (= [2.0, 1])", (7, 8)),
    ("  two: 2.0\n  three: two\n", "k - three", "sub", "three (= 2.0)", (8, 8)),
    ("  two: 2.5\n", "where(k > 0, k, two)", "where", "two (= 2.5)", (7, 6)),
])
def test_check_refuses_a_float_number_held_in_a_let_at_its_use(tmp_path, lets, use, op, shown,
                                                               place):
    text = INPUTS + "let:\n" + lets + f"outputs:\n  y: {use}\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, path="spec.yaml")
    message = str(caught.value)
    line, column = place
    assert message.startswith(f"spec.yaml:{line}:{column}: outputs.y: "), message
    assert f"{op}() " + SAID.format(shown=shown) in message, message
    assert "cast the tensor first: cast(k, dtype(x))" in message
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    checked = CliRunner().invoke(cli, ["check", str(path)])
    assert checked.exit_code == 2, checked.output
    assert f"spec.yaml:{line}:{column}" in checked.output and SAID.format(shown=shown) in \
        checked.output.replace("\n", " "), checked.output
    assert "Traceback" not in checked.output


@pytest.mark.parametrize("lets, use", [("  two: 2\n", "k + two"), ("  two: 2.0\n", "x + two"),
                                       ("  two: 2.0\n  c: k > 0\n", "where(c, x, two)")])
def test_an_integer_number_or_a_float_tensor_beside_the_let_still_loads(lets, use):
    load_spec_text(INPUTS + "let:\n" + lets + f"outputs:\n  y: {use}\n", path="spec.yaml")
