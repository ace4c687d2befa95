"""compare --output: the chosen format in a file (tables as plain text), written whole or
not at all, refused before anything runs when it cannot be written, never over a spec.

The oracle for the numbers is the STE spec's gradient written out with numpy here
(d/dx sum(sign(x) * w) through QuantizeGrad is w where |x| <= 1, else 0).
"""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
STE = ROOT / "experiments" / "ste_sign_quantize_grad.yaml"
X = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 1.5])
W = np.arange(1.0, 8.0)
STE_GRAD_X = np.where(np.abs(X) <= 1, W, 0.0)


def compare(*args):
    return CliRunner().invoke(cli, ["compare", str(STE), "--backends", "numpy,torch", *args])


def test_json_goes_to_the_file_and_nothing_to_stdout(tmp_path):
    target = tmp_path / "cmp.json"
    result = compare("--format", "json", "--output", str(target))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    doc = json.loads(target.read_text())
    assert doc["runs"] == ["numpy", "torch"]
    row = next(r for r in doc["rows"] if r["input"] == "x")
    np.testing.assert_allclose(row["overridden"][0], STE_GRAD_X)
    np.testing.assert_allclose(row["overridden"][1], STE_GRAD_X)


def test_the_tables_are_written_as_plain_text(tmp_path):
    target = tmp_path / "cmp.txt"
    result = compare("--output", str(target))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    text = target.read_text()
    assert "\x1b[" not in text
    assert "overridden gradients side by side" in text
    x_rows = [line.split("│") for line in text.splitlines() if "│" in line][:7]
    assert [float(cells[3]) for cells in x_rows] == list(STE_GRAD_X)  # the numpy column


@pytest.mark.parametrize("fmt", ["csv", "markdown"])
def test_a_tool_format_in_the_file_is_what_stdout_would_show(tmp_path, fmt):
    target = tmp_path / f"cmp.{fmt}"
    assert compare("--format", fmt, "--output", str(target)).exit_code == 0
    shown = compare("--format", fmt)
    assert shown.exit_code == 0 and shown.stdout and target.read_text() == shown.stdout


def test_a_failing_comparison_is_still_written_and_exits_1(tmp_path):
    other = tmp_path / "other.yaml"
    other.write_text(STE.read_text().replace("QuantizeGrad: where((x >= -1) & (x <= 1), dy, "
                                             "zeros_like(dy))", "QuantizeGrad: dy"))
    target = tmp_path / "cmp.json"
    result = CliRunner().invoke(cli, ["compare", str(STE), str(other), "--tolerance", "0",
                                      "--format", "json", "--output", str(target)])
    assert result.exit_code == 1, result.stderr
    row = next(r for r in json.loads(target.read_text())["rows"] if r["input"] == "x")
    np.testing.assert_allclose(row["overridden"][1], W)  # dy passed everywhere
    assert row["within"] is False


def test_a_failed_run_leaves_the_old_file_as_it_was(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("inputs: {x: 1.0}\noutputs: {y: nosuchop(x)}\n")
    target = tmp_path / "cmp.json"
    target.write_text("precious")
    result = CliRunner().invoke(cli, ["compare", str(STE), str(bad), "--format", "json",
                                      "--output", str(target)])
    assert result.exit_code == 2
    assert target.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file


def test_an_unwritable_target_is_refused_before_anything_runs(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("precious")
    target.chmod(0o444)
    missing = tmp_path / "no" / "such" / "cmp.json"
    for path, phrase in ((target, "is read-only"), (missing, "does not exist"),
                         (tmp_path, "is a directory")):
        result = compare("--format", "json", "--output", str(path))
        assert result.exit_code == 2, result.stdout + result.stderr
        assert phrase in result.stderr and "Traceback" not in result.stderr
        assert "compare" not in result.stdout  # no tables, no run
    assert target.read_text() == "precious"
    assert not missing.parent.exists()


def test_a_spec_is_never_the_output(tmp_path):
    spec = tmp_path / "spec.yaml"
    shutil.copy(STE, spec)
    link = tmp_path / "alias.yaml"
    link.symlink_to(spec)
    before = spec.read_text()
    result = CliRunner().invoke(cli, ["compare", str(spec), "--backends", "numpy,torch",
                                      "--output", str(link)])
    assert result.exit_code == 2
    assert "is the spec being run" in result.stderr
    assert spec.read_text() == before and os.path.islink(link)


def test_help_names_the_option():
    result = CliRunner().invoke(cli, ["compare", "--help"])
    assert result.exit_code == 0 and "--output FILE" in result.stdout


def test_a_fifo_is_opened_once_and_gets_the_whole_document(tmp_path):
    # --output is checked when parsed (the FIFO's write end opened then) and written at the
    # end: the second check must reuse that end, not wait for a second reader
    import stat

    from fifo_reader import fifo_reader

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with fifo_reader(fifo) as received:
        result = compare("--format", "json", "--output", str(fifo))
        assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    row = next(r for r in json.loads(received[0])["rows"] if r["input"] == "x")
    np.testing.assert_allclose(row["overridden"][0], STE_GRAD_X)
