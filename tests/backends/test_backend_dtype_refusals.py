"""`gradcli run` refuses an integer or boolean softmax, log_softmax or logsumexp, and a boolean
max, min or prod, in the same words on every backend, where only the run sees the dtype (a
function's argument): after fix12a each rule is asked once where an op is built, by the numpy
core's builders and where the eager backends bind an op's arguments (eager_args), no longer
by a wrapper per backend or by the kernels.

The numpy core says which op could not run on which input first ("op 'max' cannot run on
inputs of shape (2, 3) bool: "), as it does for any op it cannot build; the rest of the
message is the same everywhere. TensorFlow's own refusals: test_backend_float_only_ops.py and
test_backend_integer_reductions.py; the load-time refusal (`gradcli check`): the same files.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

VALUES = {"bool": [[True, False, True], [False, False, True]], "int32": [[3, -1, 3], [0, 7, -2]],
          "int64": [[3, -1, 3], [0, 7, -2]]}
FLOAT_ONLY = {"softmax": "nn.softmax", "log_softmax": "nn.log_softmax",
              "logsumexp": "reduce_logsumexp"}
CASES = [(op, dtype) for op in FLOAT_ONLY for dtype in ("int32", "int64", "bool")] + [
    (op, "bool") for op in ("max", "min", "prod")]


def said(op: str, dtype: str) -> str:
    if op in FLOAT_ONLY:
        article = "a" if dtype == "bool" else "an"
        return (f"{op} of {article} {dtype} tensor is not defined, as TensorFlow's "
                f"{FLOAT_ONLY[op]} has floats only; cast it first: {op}(cast(k, dtype(x))), x a "
                "float tensor")
    return (f"{op} of a boolean tensor is not defined, as TensorFlow's reduce_{op} has no "
            f"boolean kernel; cast it first: {op}(cast(x > 0, dtype(x)))")


@pytest.mark.parametrize("op, dtype", CASES)
@pytest.mark.parametrize("axis", ["", ", axis=0"])
def test_gradcli_run_refuses_the_dtype_alike_on_every_backend(tmp_path, backend, op, dtype, axis):
    path = tmp_path / "spec.yaml"
    path.write_text(f"inputs:\n  x: [1.0, 2.0]\n  k: {{value: {json.dumps(VALUES[dtype])}, "
                    f"dtype: {dtype}}}\nfunctions:\n  f:\n    args: [v]\n"
                    f"    forward: {op}(v{axis})\n    gradient: [none]\n"
                    "let:\n  r: f(k)\noutputs:\n  y: sum(x)\n")
    out = CliRunner().invoke(cli, ["run", str(path), "--backend", backend],
                             env={"NO_COLOR": "1", "COLUMNS": "300"})
    core = f"op '{op}' cannot run on inputs of shape (2, 3) {dtype}: " if backend == "numpy" else ""
    assert out.exit_code == 2, out.output
    assert out.stderr == (f"error: {path}:7:14: {op}() failed: {core}{said(op, dtype)}\n"
                          f"        forward: {op}(v{axis})\n                 ^\n")
