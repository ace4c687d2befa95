"""An output that is a bare number (`y: 1.0`, or a let holding one) is a constant: its value
is the number in the spec's dtype, and no input has a gradient from it (unconnected, as for
any output that does not depend on an input), on every backend, from `run` as from `check`.

Oracle: numpy's own conversion of the literal to the spec's dtype; "no gradient" is what an
output built from no input has.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from backend_helpers import load
from click.testing import CliRunner

from gradcli import runner
from gradcli.cli import cli

CONSTANT = """
inputs:
  x: [1.0, -2.0]
let:
  c: -1.5
outputs:
  y: 0.1
  k: 2
  held: c
  z: sum(x * x)
unconnected: {unconnected}
"""


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("unconnected", ["none", "zero"])
def test_a_bare_number_output_is_a_constant_with_no_gradient(backend, dtype, unconnected):
    spec = load(CONSTANT.format(unconnected=unconnected), "constant", dtype)
    result = runner.run(spec, backend=backend)
    for name, literal in (("y", 0.1), ("k", 2), ("held", -1.5)):
        value = np.asarray(result.values[name])
        assert value.shape == () and value.dtype == np.dtype(dtype), name
        assert value == np.asarray(literal, dtype=dtype), name  # 0.1 rounded to the dtype
        row = result.gradients[name]["x"]
        for kind in ("overridden", "true", "numeric"):
            got = getattr(row, kind)
            if unconnected == "none":
                assert got is None, (name, kind)
            else:
                np.testing.assert_array_equal(got, np.zeros(2, dtype=dtype), err_msg=name)
    x = np.array([1.0, -2.0], dtype=dtype)
    np.testing.assert_allclose(result.gradients["z"]["x"].overridden, 2 * x, rtol=1e-6)


def test_check_and_run_agree_on_a_constant_output(tmp_path):
    path = tmp_path / "c01.yaml"
    path.write_text("inputs:\n  x: [1.0]\noutputs:\n  y: 1.0\n")
    env = {"NO_COLOR": "1", "COLUMNS": "200"}
    checked = CliRunner().invoke(cli, ["check", str(path)], env=env)
    assert checked.exit_code == 0, checked.output
    ran = CliRunner().invoke(cli, ["run", str(path), "--format", "json"], env=env)
    assert ran.exit_code == 0, ran.output
    assert "internal error" not in ran.stderr and "Traceback" not in ran.stderr
    document = json.loads(ran.stdout)
    assert document["values"] == {"y": 1.0}
    assert document["gradients"]["y"]["x"]["overridden"] is None
    assert document["gradients"]["y"]["x"]["true"] is None
