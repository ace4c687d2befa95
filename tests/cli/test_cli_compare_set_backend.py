"""compare A.yaml B.yaml --set backend=NAME: every spec runs on NAME, spec against spec
(tryout7 finding 5: two specs on one non-default backend needed both files edited).

relu6's gradient at NaN is where the backends part (a documented convention):
torch's autograd gives 1 (computed here with torch), TensorFlow's and so the numpy
core's 0. sum(x) has gradient 1 everywhere. So relu6 against sum agree on torch
(exit 0) and differ at x[0] on numpy (exit 1): the verdict says which backend ran.
"""
import json

import numpy as np
import torch
from click.testing import CliRunner

from gradcli.cli import cli

X = "[.nan, 1.0, 3.0]"
RELU6 = f"name: relu6\ninputs:\n  x: {X}\noutputs:\n  y: sum(relu6(x))\n"
LINEAR = f"name: linear\ninputs:\n  x: {X}\noutputs:\n  y: sum(x)\n"


def torch_gradient(f) -> list:
    x = torch.tensor([float("nan"), 1.0, 3.0], dtype=torch.float64, requires_grad=True)
    f(x).sum().backward()
    return [float(v) for v in x.grad]


def compare(*args):
    return CliRunner().invoke(cli, ["compare", *args], env={"NO_COLOR": "1", "COLUMNS": "160"})


def test_set_backend_runs_every_spec_on_that_backend_and_the_verdict_is_its(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(RELU6)
    b.write_text(LINEAR)
    expected = [torch_gradient(torch.nn.functional.relu6), torch_gradient(lambda x: x)]
    assert expected == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    on_torch = compare(str(a), str(b), "--set", "backend=torch", "--tolerance", "0.5",
                       "--format", "json")
    assert on_torch.exit_code == 0, on_torch.output
    doc = json.loads(on_torch.stdout)
    (row,) = doc["rows"]
    assert (row["output"], row["input"]) == ("y", "x")
    assert row["overridden"] == expected
    assert row["within"] is True and doc["within_tolerance"] is True
    # the files' own backend (numpy): the same two specs differ at x[0], exit 1
    on_numpy = compare(str(a), str(b), "--tolerance", "0.5", "--format", "json")
    assert on_numpy.exit_code == 1, on_numpy.output
    (row,) = json.loads(on_numpy.stdout)["rows"]
    assert row["within"] is False and row["overridden"][1] == [1.0, 1.0, 1.0]
    assert row["overridden"][0][0] != expected[0][0]
    np.testing.assert_array_equal(row["overridden"][0][1:], expected[0][1:])


def test_help_and_the_one_backend_error_point_to_set_backend(tmp_path):
    assert "--set backend=torch" in " ".join(compare("--help").stdout.split())
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(RELU6)
    b.write_text(LINEAR)
    refused = compare(str(a), str(b), "--backends", "torch")
    assert refused.exit_code == 2 and "--set backend=NAME" in refused.stderr


def test_backend_flag_runs_every_spec_there_and_every_format_says_which_backend_ran(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(RELU6)
    b.write_text(LINEAR)
    expected = [torch_gradient(torch.nn.functional.relu6), torch_gradient(lambda x: x)]
    flag = compare(str(a), str(b), "--backend", "torch", "--tolerance", "0.5", "--format", "json")
    assert flag.exit_code == 0, flag.output
    doc = json.loads(flag.stdout)
    assert doc["rows"][0]["overridden"] == expected  # torch's autograd: the verdict is torch's
    assert doc["runs"] == ["relu6", "linear"] and doc["backends"] == ["torch", "torch"]
    # --backend wins over a --set backend= given beside it, as in sweep
    both = compare(str(a), str(b), "--set", "backend=numpy", "--backend", "torch", "--format", "json")
    assert json.loads(both.stdout)["backends"] == ["torch", "torch"]
    files = compare(str(a), str(b), "--format", "json")
    assert json.loads(files.stdout)["backends"] == ["numpy", "numpy"]
    table = compare(str(a), str(b), "--backend", "torch")
    assert table.stdout.splitlines()[0] == "backend torch", table.stdout
    csv = compare(str(a), str(b), "--backend", "torch", "--format", "csv").stdout.splitlines()
    assert "0,,comparison,1,linear,,,,,,backend,,torch" in csv
    markdown = compare(str(a), str(b), "--backend", "torch", "--format", "markdown").stdout
    assert "\nbackend torch\n" in markdown


def test_across_backends_each_column_is_named_and_backend_with_backends_is_refused(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(RELU6)
    across = compare(str(a), "--backends", "numpy,torch", "--format", "json")
    assert json.loads(across.stdout)["backends"] == ["numpy", "torch"]
    assert compare(str(a), "--backends", "numpy,torch").stdout.splitlines()[0] == "backends numpy, torch"
    refused = compare(str(a), "--backends", "numpy,torch", "--backend", "torch")
    assert refused.exit_code == 2 and "give one of them" in refused.stderr and not refused.stdout
    unknown = compare(str(a), str(a), "--backend", "torhc")
    assert unknown.exit_code == 2 and "did you mean 'torch'" in unknown.stderr


def test_set_backend_with_backends_is_refused_in_one_line_before_anything_runs(tmp_path):
    # review8 F5: --backends ran numpy and tensorflow and silently dropped --set backend=torch
    a = tmp_path / "a.yaml"
    a.write_text(RELU6)
    for given in ("backend=torch", " backend = torch"):
        refused = compare(str(a), "--backends", "numpy,tensorflow", "--set", given,
                          "--format", "json")
        assert refused.exit_code == 2 and not refused.stdout, refused.output
        assert refused.stderr == ("error: --set backend=NAME runs every spec on one backend and "
                                  "--backends compares each spec across several: give one of them\n")
    # a --set of another key, or of a key below one named backend, is not the backend
    kept = compare(str(a), "--backends", "numpy,torch", "--set", "name=backend", "--format", "json")
    assert kept.exit_code == 0 and json.loads(kept.stdout)["backends"] == ["numpy", "torch"]
