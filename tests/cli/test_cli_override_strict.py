"""--strict and the "matched no op" warning tell the truth about override_map entries on every
backend (tryout10 F0): an entry that matches no op fails check/run --strict (exit 2) at its
place; an override of stop_gradient, an op type, is counted and warns of nothing; an entry for
grad_pass_through, which builds no op of its own type, is refused at its place.
The gradients are checked against numpy, computed here."""
import json

import numpy as np
import pytest
from available import backend_params
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
X = np.array([0.5, -2.0, 1.5])


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], env=ENV)


def write(tmp_path, let: str, override: str):
    path = tmp_path / "s.yaml"
    path.write_text(f"inputs:\n  x: [0.5, -2.0, 1.5]\nlet:\n  d: {let}\noutputs:\n  y: sum(d)\n"
                    f"override_map:\n  {override}\n")
    return path


@pytest.mark.parametrize("command", ["check", "run"])
def test_an_entry_that_matches_no_op_fails_strict_at_its_place(tmp_path, command):
    path = write(tmp_path, "x * x", "sign: zero")
    warning = f"{path}:8:3: override_map.sign: override_map entry 'sign' -> 'zero' matches no op"
    loose = invoke(command, path)
    assert loose.exit_code == 0, loose.output
    assert warning in loose.stderr
    strict = invoke(command, "--strict", path)
    assert strict.exit_code == 2, strict.output
    assert warning in strict.stderr and "--strict is set" in strict.stderr


@pytest.mark.parametrize("backend", backend_params())
def test_an_override_of_stop_gradient_is_counted_and_passes_strict(tmp_path, backend):
    path = write(tmp_path, "stop_gradient(x) * x", "stop_gradient: reverse")
    assert invoke("check", "--strict", path).exit_code == 0
    result = invoke("run", "--strict", path, "--backend", backend, "--format", "json")
    assert result.exit_code == 0, result.output
    assert "matched no op" not in result.stderr
    doc = json.loads(result.stdout)
    assert doc["overrides"] == [{"op": "stop_gradient", "gradient": "reverse", "scope": None,
                                 "matched_ops": 1}]
    assert doc["warnings"] == []
    # -dy through the stopped factor, dy * x through the other: -x + x
    np.testing.assert_array_equal(doc["gradients"]["y"]["x"]["overridden"], -X + X)


@pytest.mark.parametrize("backend", backend_params())
def test_an_entry_for_grad_pass_through_is_refused_at_its_place(tmp_path, backend):
    path = write(tmp_path, "grad_pass_through(round(x)) * x", "grad_pass_through: zero")
    for args in (["check"], ["run", "--backend", backend]):
        result = invoke(*args, path)
        assert result.exit_code == 2, result.output
        assert f"{path}:8:3: override_map.grad_pass_through: 'grad_pass_through' is not an op " \
               "type" in result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""
