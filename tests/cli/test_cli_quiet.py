"""--quiet: one unwrapped line per spec on stderr; the tool formats stay whole; no --output."""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

FAILING = ("name: {name}\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x * x)\n"
           "expect:\n  values: {{y: 15.0}}\n  gradients: {{y: {{x: [2, 4, 7]}}}}\n")


def spec(tmp_path, name="a-rather-long-experiment-name-that-fills-the-line"):
    path = tmp_path / "s.yaml"
    path.write_text(FAILING.format(name=name))
    return str(path)


def test_a_failed_line_is_never_wrapped(tmp_path):
    result = CliRunner().invoke(cli, ["run", spec(tmp_path), "-q"], env={"COLUMNS": "80"})
    assert result.exit_code == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and len(failed[0]) > 80
    # y = 1 + 4 + 9 = 14 and dy/dx = 2x = [2, 4, 6]: both failures on the one line
    assert "values.y: expected 15, got 14" in failed[0]
    assert failed[0].endswith("(max |diff| 1; rtol 1e-06, atol 1e-09)")
    assert result.stderr.splitlines()[-1] == "0 passed, 1 failed"


def test_quiet_with_output_is_refused_before_running(tmp_path):
    target = tmp_path / "out.txt"
    result = CliRunner().invoke(cli, ["run", spec(tmp_path), "-q", "--output", str(target)])
    assert result.exit_code == 2
    assert "--quiet prints one line per spec on stderr instead of the tables" in result.stderr
    assert not target.exists() and "FAILED" not in result.stderr


def test_quiet_leaves_json_whole_and_says_so_in_help(tmp_path):
    result = CliRunner().invoke(cli, ["run", spec(tmp_path), "-q", "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["gradients"]["y"]["x"]["overridden"] == [2.0, 4.0, 6.0]
    help_text = " ".join(CliRunner().invoke(cli, ["run", "--help"]).stdout.split())
    assert "Only the table format has a quiet form: json, markdown and csv are always whole" in help_text


NONFINITE = ("name: blows-up\ninputs:\n  w: [1000.0]\noutputs:\n  loss: sum(exp(w))\n"
             "train: {optimizer: {name: sgd, lr: 0.1}, steps: 2, on_nonfinite: error}\n")


def test_a_non_finite_loss_under_on_nonfinite_error_is_counted_as_failed_not_as_an_error(tmp_path):
    """exp(1000) overflows float64 at step 0: exit 1 (docs/training.md), so the summary says
    failed, as for an unmet expect; "error" stays the word of an exit-2 spec error (tryout12)."""
    blows = tmp_path / "blows.yaml"
    blows.write_text(NONFINITE)
    result = CliRunner().invoke(cli, ["run", str(blows), "-q"])
    assert result.exit_code == 1
    assert "is inf at step 0" in result.stderr
    assert result.stderr.splitlines()[-1] == "0 passed, 1 failed (1 on a non-finite loss)"
    failing, bad = spec(tmp_path), tmp_path / "bad.yaml"
    bad.write_text("inputs:\n  x: [1.0]\noutputs:\n  y: sine(x)\n")
    result = CliRunner().invoke(cli, ["run", str(blows), failing, str(bad), "-q"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "0 passed, 2 failed (1 on a non-finite loss), 1 error"
    document = json.loads(CliRunner().invoke(cli, ["run", str(blows), "--format", "json"]).stdout)
    assert document["exit_code"] == 1 and set(document) == {"path", "error", "exit_code"}


STOPS = ("inputs: {w: [1.0]}\noutputs: {loss: sum(log(w))}\n"
         "train: {optimizer: {name: sgd, lr: 10.0}, steps: 5, on_nonfinite: error}\n")


def test_a_training_stopped_on_a_non_finite_loss_has_a_failed_line_under_quiet(tmp_path):
    """--help promises each spec's line says passed, FAILED or ran: the spec whose training
    stopped (exit 1, counted as failed by the summary) said `error: ...` instead."""
    # the oracle: sgd on loss = log(w), dloss/dw = 1/w, from w = 1 with lr 10
    w = np.array([1.0])
    losses = []
    for _ in range(5):
        with np.errstate(invalid="ignore"):
            losses.append(float(np.sum(np.log(w))))
        if not np.isfinite(losses[-1]):
            break
        w = w - 10.0 * (1.0 / w)
    assert losses[0] == 0.0 and np.isnan(losses[1]) and len(losses) == 2  # w = -9 at step 1
    stops = tmp_path / "stops.yaml"
    stops.write_text(STOPS)
    passing = tmp_path / "passing.yaml"
    passing.write_text("name: fine\ninputs:\n  x: [1.0]\noutputs:\n  y: sum(x)\n"
                       "expect:\n  values: {y: 1.0}\n")
    result = CliRunner().invoke(cli, ["run", str(stops), spec(tmp_path, "unmet"), str(passing),
                                      "-q"], env={"COLUMNS": "40"})
    assert result.exit_code == 1
    assert result.stdout == ""  # every FAILED line is on stderr, as the unmet expect's
    lines = result.stderr.splitlines()
    assert not [line for line in lines if line.startswith("error")]
    assert [line.split(":")[0] for line in lines] == [
        "FAILED stops", "FAILED unmet", "passed fine", "1 passed, 2 failed (1 on a non-finite loss)"]
    # named as its runs are (no name: the file's stem); one line, never wrapped at 40 columns
    assert lines[0] == (f"FAILED stops: training stopped: train.loss 'loss' is NaN at step 1; "
                        f"born as NaN at log(w) ({stops}:2:21) (on_nonfinite: error)")
    document = json.loads(CliRunner().invoke(cli, ["run", str(stops), "-q", "--format",
                                                   "json"]).stdout)  # the tool formats as they were
    assert document["exit_code"] == 1 and document["error"] == f"{stops}: " + lines[0].split(
        "training stopped: ", 1)[1]
