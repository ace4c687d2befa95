"""The command line through click's CliRunner, stdout and stderr kept apart."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
STE = str(ROOT / "experiments" / "ste_sign_quantize_grad.yaml")
CLIP = str(ROOT / "experiments" / "clip_by_norm_sgd_step.yaml")


def invoke(*args, env=None):
    return CliRunner().invoke(cli, list(args), env=env)


def write(tmp_path, text, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_run_prints_the_three_gradients_and_passes_expect():
    result = invoke("run", STE, env={"NO_COLOR": "1", "COLUMNS": "120"})
    assert result.exit_code == 0, result.stderr
    assert "override sign → QuantizeGrad: 1 op" in result.stdout
    assert "expect: passed" in result.stdout
    assert "\x1b[" not in result.stdout  # NO_COLOR honoured


def test_json_is_one_strict_document_with_the_contract_keys():
    result = invoke("run", STE, "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert {"name", "backend", "dtype", "seed", "values", "gradients", "summary", "expect"} <= set(doc)
    grads = doc["gradients"]["y"]["x"]
    assert grads["overridden"] == [0, 2, 3, 4, 5, 6, 0]
    assert grads["true"] == [0, 0, 0, 0, 0, 0, 0]
    summary = doc["summary"]["y"]["x"]
    assert summary["cosine"] == 0.0 and summary["norm_true"] == 0.0
    assert summary["sign_agreement"] == pytest.approx(2 / 7)
    assert doc["values"]["y"] == 12.0
    assert doc["expect"] == {"passed": True, "failures": [], "declared": True}


def test_json_writes_null_for_unconnected_and_strings_for_non_finite(tmp_path):
    spec = write(tmp_path, "inputs:\n  x: [1.0, 0.0]\n  u: 2.0\noutputs:\n  y: sum(log(x))\n")
    result = invoke("run", spec, "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["gradients"]["y"]["u"]["overridden"] is None
    assert doc["gradients"]["y"]["x"]["overridden"] == [1.0, "Infinity"]
    assert doc["values"]["y"] == "-Infinity"


def test_a_failed_expectation_exits_1_and_says_what_differed(tmp_path):
    # x and w keep their shapes: an expect written for another shape is refused at load (exit 2)
    result = invoke("run", STE, "--set", "inputs.w=[1, 2, 3, 4, 5, 6, 15]")
    assert result.exit_code == 1
    assert "values.y: expected 12, got 20" in result.stdout  # -1 -2 -3 + 0 + 5 + 6 + 15


def test_output_file_is_written_whole(tmp_path):
    target = tmp_path / "out" / "result.json"
    target.parent.mkdir()  # --output creates no folders (test_cli_arguments)
    result = invoke("run", CLIP, "--format", "json", "--output", str(target))
    assert result.exit_code == 0
    doc = json.loads(target.read_text())
    # lr 0.1 acts as float32(0.1), as in tf.compat.v1.train: one step of 5 * 0.10000000149
    assert doc["train"]["params"] == {"w": 1.4999999925494194, "x": 2.4999999925494194}
    assert doc["train"]["loss"] == [18.0]
    assert not list(target.parent.glob(".*.tmp"))


def test_markdown_and_csv(tmp_path):
    md = invoke("run", STE, "--format", "markdown")
    assert md.exit_code == 0 and "### gradients of `y`" in md.stdout
    csv_out = invoke("run", STE, "--format", "csv")
    lines = csv_out.stdout.strip().splitlines()
    assert lines[0] == "experiment,backend,section,output,input,step,kind,element,value"
    assert "ste-sign-quantize-grad,numpy,gradients,y,x,,overridden,[1],2.0" in lines
    assert "ste-sign-quantize-grad,numpy,gradients,y,x,,true,[1],0.0" in lines


@pytest.mark.parametrize("text, where, phrase", [
    ("inputs:\n  w: {uniformm: [0, 1], shape: [2]}\noutputs:\n  y: sum(w)\n",
     ":2:", "did you mean 'uniform'"),
    ("inputs:\n  x: 1.0\noutputs:\n  y: x +* 2\n", ":4:", "y"),
    ("inputs:\n  x: 1.0\noutputs:\n  y: sine(x)\n", ":4:", "sine"),
    ("inputs:\n  x: 1.0\noutputz:\n  y: x\n", ":3:", "outputs"),
    ("inputs:\n  x: 1.0\noutputs:\n  y: " + "(" * 300 + "x" + ")" * 300 + "\n", ":4:", "deep"),
])
def test_bad_specs_exit_2_with_a_location(tmp_path, text, where, phrase):
    spec = write(tmp_path, text)
    result = invoke("run", spec)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr + result.stdout
    assert where in result.stderr
    assert phrase in result.stderr.lower()


def test_a_wrong_gradient_shape_names_the_gradient_the_op_and_the_shapes(tmp_path):
    spec = write(tmp_path, "inputs:\n  x: [1.0, 2.0, 3.0]\nregister:\n  Bad: dy[0:2]\n"
                           "override_map:\n  tanh: Bad\noutputs:\n  y: sum(tanh(x))\n")
    result = invoke("run", spec)
    assert result.exit_code == 2
    message = result.stderr
    assert "'Bad'" in message and "'tanh'" in message and "(2,)" in message and "(3,)" in message
    assert "Traceback" not in message


def test_a_missing_file_exits_2():
    result = invoke("run", "no/such/spec.yaml")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_check_validates_without_running_and_lints_strictly(tmp_path):
    assert invoke("check", STE).exit_code == 0
    unused = write(tmp_path, "inputs:\n  x: 1.0\noverride_map:\n  sign: identity\noutputs:\n  y: x * 2\n")
    loose = invoke("check", unused)
    assert loose.exit_code == 0 and "sign" in loose.stderr
    assert invoke("check", "--strict", unused).exit_code == 2


def test_compare_two_specs_side_by_side_and_tolerance(tmp_path):
    other = write(tmp_path, Path(STE).read_text().replace("Sign: QuantizeGrad", "Sign: identity"))
    same = invoke("compare", STE, STE, "--tolerance", "1e-12")
    assert same.exit_code == 0, same.stderr
    differs = invoke("compare", STE, other, "--tolerance", "1e-12", "--format", "json")
    assert differs.exit_code == 1
    doc = json.loads(differs.stdout)
    row = next(r for r in doc["rows"] if r["input"] == "x")
    assert row["overridden"][1] == [1, 2, 3, 4, 5, 6, 7] and row["max_diff"] == 7.0


def test_list_and_schema():
    ops = invoke("list", "ops")
    assert ops.exit_code == 0 and "max_with_argmax" in ops.stdout
    grads = invoke("list", "gradients")
    for name in ("identity", "hardtanh", "reverse", "zero"):
        assert name in grads.stdout
    backends = invoke("list", "backends")
    assert backends.exit_code == 0 and "numpy" in backends.stdout
    schema = json.loads(invoke("schema").stdout)
    assert "inputs" in schema["properties"]


def test_grad_is_listed_beside_the_ops_and_named_by_the_schema():
    ops = invoke("list", "ops")
    assert "grad(y, x)" in ops.stdout and "Hessian-vector" in ops.stdout
    schema = invoke("schema").stdout
    assert "grad(y, x)" in json.loads(schema)["properties"]["outputs"]["description"] or \
        "grad(y, x)" in schema


def test_unknown_backend_exits_2():
    result = invoke("run", STE, "--backend", "mxnet")
    assert result.exit_code == 2 and "unknown backend 'mxnet'" in result.stderr


def test_python_dash_m_gradcli_works():
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "--quiet", STE],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "passed ste-sign-quantize-grad" in proc.stderr


def test_a_large_input_is_summarized_and_checked_along_random_directions(tmp_path):
    spec = write(tmp_path, "inputs:\n  x: {normal: [0, 1], shape: [3000]}\n"
                           "  w: {uniform: [-1, 1], shape: [3000]}\noutputs:\n  y: sum(tanh(x) * w)\n")
    table = invoke("run", spec, env={"NO_COLOR": "1", "COLUMNS": "120"})
    assert table.exit_code == 0, table.stderr
    assert "norm" in table.stdout and "directional:" in table.stdout
    assert "[2999]" not in table.stdout
    doc = json.loads(invoke("run", spec, "--format", "json").stdout)
    x = doc["gradients"]["y"]["x"]
    assert x["numeric_kind"] == "directional"
    summary = doc["summary"]["y"]["x"]
    assert summary["numeric_max_abs_diff"] < 1e-6  # the estimate matches the true gradient's projection
    assert summary["cosine"] == 1.0


def test_a_scoped_override_entry_is_counted_once_over_all_its_scopes(tmp_path):
    spec = write(tmp_path, "inputs:\n  x: 2.0\nlet:\n  p: x * 3\n  q: identity(x)\n"
                           "override_map:\n  - {op: identity, gradient: reverse, scope: [p, q]}\n"
                           "outputs:\n  y: p + q\n")
    doc = json.loads(invoke("run", spec, "--format", "json").stdout)
    assert doc["overrides"] == [{"op": "identity", "gradient": "reverse", "scope": ["p", "q"],
                                 "matched_ops": 1}]
    assert doc["warnings"] == []
    assert doc["gradients"]["y"]["x"]["overridden"] == 2.0  # 3 through p, -1 through q


def test_compare_backends_explains_conventions_in_notes():
    pytest.importorskip("torch")
    result = invoke("compare", CLIP, "--backends", "numpy,torch", "--tolerance", "1e-9",
                    env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "torch: torch.nn.utils.clip_grad_norm_ divides by (norm + 1e-06)" in result.stdout
    assert "training loss side by side" in result.stdout


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_uniform_range_beyond_float64_is_a_placed_user_error(tmp_path, command):
    path = write(tmp_path, "name: wide\ninputs:\n  x: {uniform: [-1e308, 1e308], shape: [3]}\n"
                           "outputs:\n  y: sum(x * x)\n")
    result = invoke(command, str(path))
    assert result.exit_code == 2
    assert "internal error" not in result.stderr and "OverflowError" not in result.stderr
    assert result.stderr.startswith(f"error: {path}:3:16: inputs.x.uniform: uniform needs high - low "
                                    "within float64's range")


class _Unsayable(Exception):
    def __str__(self):
        raise RuntimeError("no text")


@pytest.mark.parametrize("debug, code", [(False, 2), (True, 1)])
def test_an_error_while_reporting_an_error_exits_without_a_traceback(debug, code):
    # reporting() turns any exception into "internal error: <type>: <text>"; here the text
    # itself fails, so the message cannot be made: the command still ends plainly with 2
    # (--debug: the traceback, exit 1, as Python's own would)
    import click

    from gradcli.cli_common import reports_errors

    @click.command()
    @reports_errors
    def broken():
        raise _Unsayable()

    result = CliRunner().invoke(broken, ["--debug"] if debug else [])
    assert result.exit_code == code
    if debug:
        assert "Traceback" in result.stderr and "_Unsayable" in result.stderr
    else:
        assert "Traceback" not in result.stderr
        assert result.stderr == ("internal error while reporting an error: RuntimeError\n"
                                 "run again with --debug for the traceback, and please report it\n")
