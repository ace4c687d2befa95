"""Non-finite provenance and run-time errors that point into the spec, through the CLI."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

BACKENDS = ["numpy", "torch", "jax", "tensorflow"]

LOG_SPEC = """\
name: log-at-zero
inputs:
  x: [0.0, 1.0, 2.0]
let:
  a: log(x)
outputs:
  y: sum(x * a)
  z: sum(where(x > 0, log(x), 0))
"""


def run(tmp_path, text, *args):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return CliRunner().invoke(cli, ["run", str(path), "--no-numeric", *args]), str(path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_json_names_where_each_nan_and_infinity_was_born(tmp_path, backend):
    x = np.array([0.0, 1.0, 2.0])
    with np.errstate(all="ignore"):
        a = np.log(x)                              # -inf at x = 0: born at log(x), line 5 col 6
        assert np.isneginf(a[0]) and np.isnan(np.sum(x * a))
    result, path = run(tmp_path, LOG_SPEC, "--format", "json", "--backend", backend)
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)["nonfinite"]
    got = {(r["pass"], r["tensor"]): r for r in records}
    assert set(got) == {("forward", "a"), ("forward", "y"), ("overridden", "dy/dx"),
                        ("overridden", "dz/dx"), ("true", "dy/dx"), ("true", "dz/dx")}
    for key in [("forward", "a"), ("forward", "y")]:
        assert got[key]["expr"] == "log(x)" and got[key]["location"] == f"{path}:5:6"
        assert got[key]["op"] == "log" and got[key]["born"] == "-Infinity" and got[key]["step"] is None
    assert got[("forward", "y")]["value"] == "NaN"
    # y = x * log(x): its gradient reads the forward -inf (log(x) + x/x) -> the forward log.
    for phase in ("overridden", "true"):
        assert got[(phase, "dy/dx")]["location"] == f"{path}:5:6"
        # z: the forward is finite (where masks log(0)); the backward sends 0 into log's
        # gradient 0 / x at x = 0: NaN born in the gradient of the log at line 8, col 23.
        assert got[(phase, "dz/dx")]["expr"] == "log(x)"
        assert got[(phase, "dz/dx")]["location"] == f"{path}:8:23"
        assert got[(phase, "dz/dx")]["born"] == "NaN"


def test_json_nonfinite_is_empty_when_everything_is_finite(tmp_path):
    result, _ = run(tmp_path, "inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(log(x))\n",
                    "--format", "json")
    assert json.loads(result.stdout)["nonfinite"] == []


def test_table_note_and_expect_finite(tmp_path):
    result, path = run(tmp_path, LOG_SPEC + "expect:\n  finite: true\n")
    assert result.exit_code == 1
    out = " ".join(result.stdout.split())
    assert "non-finite: forward pass: -inf born at log(x)" in out
    assert f"{path}:8:23" in out and "finite: true dz/dx is NaN" in out
    assert "Traceback" not in result.output


def test_expect_finite_passes_on_a_finite_spec(tmp_path):
    text = "inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(log(x))\nexpect:\n  finite: true\n"
    result, _ = run(tmp_path, text)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_names_the_first_nonfinite_step(tmp_path, backend):
    # w = 1 - 0.5 * 2 = 0 after one sgd step on loss = 2w... then log(w) = -inf at step 1.
    text = ("inputs:\n  w: 1.0\noutputs:\n  loss: log(w) + 2 * w\ntrain:\n  loss: loss\n"
            "  optimizer: {name: sgd, lr: 0.3333333333333333}\n  steps: 3\n")
    w = 1.0
    w -= (1 / w + 2) / 3     # step 0: gradient 1/w + 2 = 3 -> w = 0 exactly
    assert w == 0.0          # so step 1's loss is log(0) = -inf
    result, path = run(tmp_path, text, "--format", "json", "--backend", backend)
    records = [r for r in json.loads(result.stdout)["nonfinite"] if r["pass"] == "train"]
    assert records and records[0]["step"] == 1 and records[0]["expr"] == "log(w)"
    assert records[0]["location"] == f"{path}:4:9"


ERRORS = {
    "getitem": ("inputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x[7] * x)\n",
                "index 7 is out of bounds", 4, 11),
    "stack": ("inputs:\n  x: [1.0, 2.0, 3.0]\n  k: {value: [1, 2, 3], dtype: int64}\noutputs:\n"
              "  y: sum(stack([x, k]))\n",
              "stack() of a float64 tensor and an int64 tensor is not defined", 5, 10),  # the call
    "no gradients": ("inputs:\n  x: [1.0, 2.0]\n  c: {value: 2.0, trainable: false}\noutputs:\n"
                     "  y: sum(x * 2)\n  z: c * 3\ntrain:\n  loss: z\n"
                     "  optimizer: {name: sgd, lr: 0.1}\n", "no gradients provided for any variable",
                     8, 3),  # the loss key
    "global_norm": ("inputs:\n  x: [1.0, 2.0]\n  c: {value: 2.0, trainable: false}\noutputs:\n"
                    "  y: sum(x * 2)\n  z: c * 3\ntrain:\n  loss: z\n"
                    "  optimizer: {name: sgd, lr: 0.1}\n  clip: {global_norm: 1}\n",
                    "global_norm() needs at least one tensor", 10, 3),  # the clip key
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_run_time_op_errors_name_the_spec_line_and_column(tmp_path, case):
    text, message, line, column = ERRORS[case]
    result, path = run(tmp_path, text)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert f"{path}:{line}:{column}" in result.stderr.replace("\n", "")
    assert "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize("backend", ["torch", "jax", "tensorflow"])
@pytest.mark.parametrize("case", ["getitem", "no gradients"])
def test_run_time_errors_point_into_the_spec_on_every_backend(tmp_path, backend, case):
    text, _, line, column = ERRORS[case]
    result, path = run(tmp_path, text, "--backend", backend)
    assert result.exit_code == 2
    assert f"{path}:{line}:{column}" in result.stderr.replace("\n", "")
    assert "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_names_a_gradient_born_nonfinite(tmp_path, backend):
    # loss = sqrt(w) at w = 0 is finite, but its gradient 0.5 / sqrt(0) is inf (numpy says so),
    # so step 0's update is the first non-finite one, born in the gradient of sqrt(w).
    with np.errstate(all="ignore"):
        assert np.isposinf(0.5 / np.sqrt(0.0))
    text = ("inputs:\n  w: 0.0\noutputs:\n  loss: 3 * sqrt(w)\ntrain:\n  loss: loss\n"
            "  optimizer: {name: sgd, lr: 0.1}\n  steps: 2\n")
    result, path = run(tmp_path, text, "--format", "json", "--backend", backend)
    records = [r for r in json.loads(result.stdout)["nonfinite"] if r["pass"] == "train"]
    assert len(records) == 1
    assert (records[0]["step"], records[0]["tensor"]) == (0, "dloss/dw")
    assert records[0]["expr"] == "sqrt(w)" and records[0]["location"] == f"{path}:4:13"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_registered_gradient_is_named_by_its_own_expression(tmp_path, backend):
    # The override's gradient dy / x at x = 0 is 2 / 0 = inf; the forward and the true
    # gradient (2 everywhere) are finite.
    text = ("inputs:\n  x: [0.0, 1.0]\nregister:\n  Bad: dy / x\noverride_map:\n  identity: Bad\n"
            "outputs:\n  y: sum(identity(x) * 2)\n")
    result, path = run(tmp_path, text, "--format", "json", "--backend", backend)
    records = json.loads(result.stdout)["nonfinite"]
    assert [(r["pass"], r["op"], r["expr"], r["location"], r["born"]) for r in records] == [
        ("overridden", "div", "dy / x", f"{path}:4:8", "Infinity")]


def test_expect_finite_takes_a_boolean(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("inputs:\n  x: 1.0\noutputs:\n  y: x\nexpect:\n  finite: maybe\n")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:6:11: expect.finite" in result.stderr.replace("\n", "")
