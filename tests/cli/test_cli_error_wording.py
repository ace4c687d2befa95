"""Errors worded for the user, exit 2, file and line kept: report on a missing path (report
takes a spec file or a sweep directory), and a matmul whose shapes do not fit (which shapes,
which axes; not numpy's gufunc signature)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli


def test_report_on_a_missing_path_names_both_things_it_takes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["report", "nodir"])
    assert done.exit_code == 2
    assert ("error: nodir: no spec file or sweep directory 'nodir': the path does not exist"
            in done.output)
    assert "the spec file" not in done.output and not (tmp_path / "report.html").exists()


MATMUL = "inputs:\n  x: {x}\n  w: {w}\noutputs:\n  y: sum({expr})\n"


@pytest.mark.parametrize("x, w, expr, said", [
    ([[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0, 3.0], "matmul(x, w)",
     "the shapes (2, 2) and (3,) do not fit: x's last axis has 2 elements but w's only axis "
     "has 3"),
    ([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]], "x @ w",
     "the shapes (1, 3) and (1, 3) do not fit: x's last axis has 3 elements but w's first "
     "axis has 1"),
    ([[[1.0, 2.0]]], [[[1.0], [2.0], [3.0]]], "matmul(x * 2, w)",
     "the shapes (1, 1, 2) and (1, 3, 1) do not fit: the first operand's last axis has 2 "
     "elements but w's second-to-last axis has 3"),
])
def test_a_matmul_that_does_not_fit_says_which_axes(tmp_path, x, w, expr, said):
    with pytest.raises(ValueError):  # the oracle: numpy's own matmul refuses these shapes
        np.matmul(np.array(x), np.array(w))
    path = tmp_path / "m.yaml"
    path.write_text(MATMUL.format(x=x, w=w, expr=expr))
    for backend in ("numpy", "torch"):
        done = CliRunner().invoke(cli, ["run", str(path), "--backend", backend])
        assert done.exit_code == 2, done.output
        assert f"{path}:5:" in done.output and said in done.output
        assert "gufunc" not in done.output and "Traceback" not in done.output


@pytest.mark.parametrize("x, w", [([[1.0, 2.0]], [3.0, 4.0]), ([1.0, 2.0], [[1.0], [2.0]]),
                                  ([[[1.0, 2.0]]], [[3.0], [4.0]])])
def test_shapes_that_fit_still_run_to_numpys_value(tmp_path, x, w):
    path = tmp_path / "m.yaml"
    path.write_text(MATMUL.format(x=x, w=w, expr="matmul(x, w)"))
    done = CliRunner().invoke(cli, ["run", str(path), "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["values"]["y"] == pytest.approx(
        float(np.matmul(np.array(x), np.array(w)).sum()), rel=1e-15)


@pytest.mark.parametrize("expr, said", [
    ("sum(x) @ 2", "the first operand is a scalar (shape ())"),
    ("x @ w", "w is a scalar (shape ())"),
    ("x @ 2", "the second operand is a scalar (shape ())"),
])
@pytest.mark.parametrize("backend", ["numpy", "torch", "jax", "tensorflow"])
def test_a_matmul_of_a_scalar_says_so_on_every_backend(tmp_path, expr, said, backend):
    # tryout10 F8: each backend refused it in its framework's words ("unsupported operand
    # type(s) for @", "{{function_node __wrapped__MatMul...")
    with pytest.raises(ValueError):  # the oracle: numpy's own matmul refuses a scalar
        np.matmul(np.array([1.0, 2.0]), np.float64(2.0))
    path = tmp_path / "m.yaml"
    path.write_text(MATMUL.format(x=[1.0, 2.0], w=3.0, expr=expr))
    done = CliRunner().invoke(cli, ["run", str(path), "--backend", backend])
    assert done.exit_code == 2, done.output
    assert f"{path}:5:" in done.output and said in done.output
    assert "needs a and b with at least one axis each" in done.output
    assert "function_node" not in done.output and "Traceback" not in done.output


def test_a_matmul_with_a_list_literal_runs_to_numpys_value(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(MATMUL.format(x=[1.0, 2.0], w=1.0, expr="x @ [[1.0, 0.5], [2.0, 3.0]] * w"))
    done = CliRunner().invoke(cli, ["run", str(path), "--format", "json"])
    assert done.exit_code == 0, done.output
    expected = float(np.matmul([1.0, 2.0], [[1.0, 0.5], [2.0, 3.0]]).sum())
    assert json.loads(done.output)["values"]["y"] == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("x, w, expr, said", [
    ([1.0, 2.0, 3.0], [1.0, 2.0], "x * w",
     "mul() failed: the shapes (3,) and (2,) do not broadcast: x's last axis has 3 elements "
     "but w's last axis has 2"),
    ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0, 3.0]] * 4, "(x + 1) - w",
     "sub() failed: the shapes (2, 3) and (4, 3) do not broadcast: the first operand's axis 0 "
     "has 2 elements but w's axis 0 has 4"),
    ([[1.0, 2.0, 3.0]], [1.0], "maximum(x, [1.0, 2.0])",
     "maximum() failed: the shapes (1, 3) and (2,) do not broadcast: x's last axis has 3 "
     "elements but the second operand's last axis has 2"),
])
@pytest.mark.parametrize("backend", ["numpy", "torch", "jax", "tensorflow"])
def test_operands_that_do_not_broadcast_say_which_axes_on_every_backend(tmp_path, x, w, expr,
                                                                         said, backend):
    """tryout12: numpy's "operands could not be broadcast together with shapes (3,) (2,) ",
    and each other backend's own words."""
    with pytest.raises(ValueError):  # the oracle: numpy's broadcasting refuses these shapes
        np.broadcast_shapes(np.shape(x), np.shape(w) if "w" in expr else (2,))
    path = tmp_path / "b.yaml"
    path.write_text(MATMUL.format(x=x, w=w, expr=expr))
    done = CliRunner().invoke(cli, ["run", str(path), "--backend", backend])
    assert done.exit_code == 2, done.output
    assert f"{path}:5:" in done.output
    assert (said + "; an elementwise op pairs the axes from the last, and the two lengths of "
            "each pair must be equal or one of them 1\n") in done.output
    assert "could not be broadcast" not in done.output and "Traceback" not in done.output
