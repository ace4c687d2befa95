"""compare's verdict: NaN against a number differs, equal infinities agree, training counts too.

The verdicts are checked on hand-made Results whose numbers are written here,
so the oracle is the arithmetic in each test, not another backend.
"""
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli import comparison, runner
from gradcli.backends.program import TrainRecord
from gradcli.cli import cli
from gradcli.runner import GradientRow, Result

NAN, INF = math.nan, math.inf


def made(name, overridden, true=None, *, dtype="float64", train=None):
    """A Result of one output y and one input x with the given gradients."""
    exp = SimpleNamespace(name=name, dtype=dtype, train=SimpleNamespace(loss="y") if train else None)
    row = GradientRow(overridden, overridden if true is None else true, None, "skipped")
    return Result(exp, "numpy", {}, {"y": {"x": row}}, {}, [], train=train)


@pytest.mark.parametrize("columns", [
    ([1.0, 2.0], [1.0, 2.0], [1.0, NAN]),   # Python's max(0.0, nan) keeps 0.0: the NaN was lost
    ([1.0, 2.0], [1.0, NAN], [1.0, 2.0]),
    ([1.0, NAN], [1.0, 2.0], [1.0, 2.0]),
])
def test_a_nan_against_a_number_differs_in_any_column(columns):
    rows, ok = comparison.compare([made(f"r{k}", c) for k, c in enumerate(columns)], 1e-6)
    assert ok is False
    assert rows[0].within is False
    assert math.isnan(rows[0].max_diff)


def test_nan_against_nan_and_equal_infinities_agree():
    columns = ([INF, -INF, NAN, 3.0], [INF, -INF, NAN, 3.0], [INF, -INF, NAN, 3.0])
    rows, ok = comparison.compare([made(f"r{k}", c) for k, c in enumerate(columns)], 0.0)
    assert ok is True and rows[0].within is True and rows[0].max_diff == 0.0


def test_opposite_infinities_and_inf_against_a_number_differ():
    for other in ([-INF, 1.0], [5.0, 1.0]):
        rows, ok = comparison.compare([made("a", [INF, 1.0]), made("b", other)], 1e6)
        assert ok is False and rows[0].max_diff == INF


def test_float32_allowance_ignores_infinite_gradients():
    # The float32 allowance scales with the largest |gradient|; an inf must not make it infinite.
    rows, ok = comparison.compare([made("a", [INF, 1.0], dtype="float32"),
                               made("b", [INF, 5.0], dtype="float32")], 1e-3)
    assert ok is False and rows[0].max_diff == 4.0


def test_summary_max_abs_diff_follows_the_same_rules():
    s = runner.summarize([INF, NAN, 2.0], [INF, NAN, 2.0], [INF, NAN, 2.0], "full", 0)
    assert s.max_abs_diff == 0.0 and s.numeric_max_abs_diff == 0.0
    assert s.sign_agreement == 1.0
    s = runner.summarize([NAN, 2.0], [1.0, 2.0], [1.0, 2.0], "full", 0)
    assert math.isnan(s.max_abs_diff)
    assert s.numeric_max_abs_diff == 0.0


def expect_block(values):
    return SimpleNamespace(values=values, gradients={}, true_gradients={}, train_params={},
                           train_loss=None, rtol=1e-6, atol=1e-9, finite=False,
                           train_final={})


def test_check_expect_reports_a_nan_gap_not_zero():
    result = made("a", [1.0])
    result.values = {"v": np.array([NAN, 2.0]), "w": np.array([INF, NAN])}
    outcome = runner.check_expect(expect_block({"v": [1.0, 2.0], "w": [INF, NAN]}), result)
    assert outcome.failures == ["values.v: expected [1. 2.], got [NaN  2.] "
                                "(max |diff| NaN; rtol 1e-06, atol 1e-09)"]


def trained(loss, w):
    return TrainRecord(loss=list(loss), params={}, gradients=[], final={"w": np.asarray(w)},
                       final_loss=loss[-1])


def test_training_losses_and_final_parameters_are_compared_under_the_tolerance():
    a = made("a", [1.0], train=trained([3.0, 2.0], [0.5, 0.25]))
    b = made("b", [1.0], train=trained([3.0, 2.0], [0.5, 0.75]))
    c = made("c", [1.0], train=trained([3.0, NAN], [0.5, 0.25]))
    rows, grads_ok = comparison.compare([a, b, c], 1e-6)
    assert grads_ok is True
    train_rows, ok = comparison.compare_training([a, b, c], 1e-6, rows)
    assert ok is False
    by = {r.quantity: r for r in train_rows}
    assert set(by) == {"loss", "final_loss", "params.w"}
    assert math.isnan(by["loss"].max_diff) and by["loss"].within is False
    assert by["params.w"].max_diff == 0.5 and by["params.w"].within is False
    same, ok = comparison.compare_training([a, a], 0.0, rows)
    assert ok is True and all(r.max_diff == 0.0 for r in same)


def test_final_metrics_on_both_parts_are_compared_too():
    a = made("a", [1.0], train=trained([3.0, 2.0], [0.5]))
    b = made("b", [1.0], train=trained([3.0, 2.0], [0.5]))
    a.train.final_metrics = {"accuracy": {"train": 0.75, "test": 0.5}}
    b.train.final_metrics = {"accuracy": {"train": 0.75, "test": 0.625}}  # one test row flipped
    rows, _ = comparison.compare([a, b], 1e-6)
    train_rows, ok = comparison.compare_training([a, b], 1e-6, rows)
    by = {r.quantity: r for r in train_rows}
    assert ok is False
    assert by["final.accuracy.train"].within is True and by["final.accuracy.train"].max_diff == 0
    assert by["final.accuracy.test"].values == [0.5, 0.625]
    assert by["final.accuracy.test"].max_diff == 0.125 and by["final.accuracy.test"].within is False
    b.train.final_metrics = {"accuracy": {"train": 0.75, "test": 0.5}}
    assert comparison.compare_training([a, b], 1e-6, rows)[1] is True


def test_a_convention_excuses_only_a_nan_gap_in_the_loss_gradient_and_in_training():
    from gradcli.backends.program import Convention

    # b's sqrt edge gives NaN where a has a number: the note explains that, and training that
    # went NaN from it; a finite gap beside it is not explained
    a = made("a", [1.0, 0.0], train=trained([3.0], [0.5]))
    b = made("b", [1.0, NAN], train=trained([3.0], [NAN]))
    b.conventions = [Convention("sqrt", "sqrt at x <= 0 or NaN: NaN in b", "y", "x", kind="nonfinite")]
    rows, ok = comparison.compare([a, b], 1e-6)
    assert ok is True and rows[0].within is False and rows[0].excused is True
    train_rows, ok = comparison.compare_training([a, b], 1e-6, rows)
    assert ok is True
    by = {r.quantity: r for r in train_rows}
    assert by["params.w"].notes == ["b: sqrt at x <= 0 or NaN: NaN in b"] and by["loss"].notes == []
    b.train = trained([3.0], [0.75])  # a finite training gap: the NaN note does not cover it
    train_rows, ok = comparison.compare_training([a, b], 1e-6, rows)
    assert ok is False and {r.quantity: r for r in train_rows}["params.w"].excused is False


def test_a_note_excuses_only_the_gaps_of_its_own_run():
    from gradcli.backends.program import Convention

    # r1's NaN note explains r1's NaN; r2's infinity against r0's number is another run's gap
    # (review7 finding 1: TensorFlow's flushed subnormal, excused by a torch note)
    note = Convention("sqrt", "sqrt at x <= 0: NaN in r1", "y", "x", None, "nonfinite")
    runs = [made("r0", [1.0, 5e154]), made("r1", [1.0, NAN]), made("r2", [1.0, INF])]
    runs[1].conventions = [note]
    rows, ok = comparison.compare(runs, 1e-6)
    assert ok is False and rows[0].within is False and rows[0].excused is False
    runs[2].conventions = [note]  # with a note of its own, r2's gap is explained too
    assert comparison.compare(runs, 1e-6)[1] is True


def test_two_runs_that_differ_from_a_noted_nan_must_still_agree_with_each_other():
    from gradcli.backends.program import Convention

    runs = [made("r0", [NAN]), made("r1", [0.0]), made("r2", [INF])]
    runs[0].conventions = [Convention("sqrt", "sqrt at x <= 0: NaN in r0", "y", "x", None,
                                      "nonfinite")]
    rows, ok = comparison.compare(runs, 1e-6)
    assert ok is False and rows[0].excused is False  # 0 against inf: no note of r1 or r2
    runs[2] = made("r2", [0.0])
    assert comparison.compare(runs, 1e-6)[1] is True


def test_only_a_nonfinite_note_excuses():
    from gradcli.backends.program import Convention

    a, b = made("a", [1.0, 0.0]), made("b", [1.0, NAN])
    for kind in ("finite", "unconnected"):
        b.conventions = [Convention("maximum", "maximum ties: half and half", "y", "x", kind=kind)]
        rows, ok = comparison.compare([a, b], 1e-6)
        assert ok is False and rows[0].excused is False and rows[0].notes
    b.conventions = [Convention("sqrt", "sqrt at x <= 0: NaN in b", "y", "x", kind="nonfinite")]
    assert comparison.compare([a, b], 1e-6)[1] is True


def test_a_run_that_does_not_train_is_left_out_of_the_training_verdict():
    a = made("a", [1.0], train=trained([3.0], [0.5]))
    rows, ok = comparison.compare_training([made("b", [1.0]), a], 1.0, [])
    assert ok is True
    assert all(r.values[0] == comparison.NOT_TRAINED and r.within is None for r in rows)
    c = made("c", [1.0], train=trained([3.0], [2.5]))  # the trained runs still meet each other
    rows, ok = comparison.compare_training([made("b", [1.0]), a, c], 1.0, [])
    assert ok is False and {r.quantity: r for r in rows}["params.w"].max_diff == 2.0


SPEC = "inputs:\n  x: [1.0, -1.0]\noutputs:\n  y: {}\n"


def test_compare_cli_three_specs_with_a_nan_in_the_last_column(tmp_path):
    paths = []
    # sqrt(-1)'s gradient is NaN for any upstream but 0 (TensorFlow's SqrtGrad gives 0 for 0)
    for name, expr in (("a", "sum(x * x)"), ("b", "sum(x * x)"),
                       ("c", "sum(x * x) + sum(sqrt(x)) * 1e-300")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(SPEC.format(expr))
        paths.append(str(path))
    result = CliRunner().invoke(cli, ["compare", *paths, "--tolerance", "1e-9", "--format", "json"])
    assert result.exit_code == 1, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    row = doc["rows"][0]
    assert row["overridden"] == [[2.0, -2.0], [2.0, -2.0], [2.0, "NaN"]]
    assert row["max_diff"] == "NaN" and row["within"] is False
    assert doc["within_tolerance"] is False


def test_compare_cli_carries_training_and_fails_on_it(tmp_path):
    text = "inputs:\n  w: 2.0\noutputs:\n  loss: w * w\ntrain:\n  loss: loss\n" \
           "  optimizer: {{name: sgd, lr: {}}}\n  steps: 2\n"
    slow, fast = tmp_path / "slow.yaml", tmp_path / "fast.yaml"
    slow.write_text(text.format(0.1))
    fast.write_text(text.format(0.2))
    result = CliRunner().invoke(cli, ["compare", str(slow), str(fast), "--tolerance", "1e-9",
                                      "--format", "json"])
    assert result.exit_code == 1, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert all(r["within"] for r in doc["rows"])  # the gradients agree; only training differs
    by = {r["quantity"]: r for r in doc["train"]}
    # sgd by hand: w <- w - lr * 2w, loss before each step w*w
    assert by["loss"]["values"] == [pytest.approx([4.0, 2.56]), pytest.approx([4.0, 1.44])]
    assert by["params.w"]["values"] == [pytest.approx(2.0 * 0.8 * 0.8), pytest.approx(2.0 * 0.6 * 0.6)]
    assert by["params.w"]["within"] is False
    assert by["final_loss"]["max_diff"] == pytest.approx((2.0 * 0.64) ** 2 - (2.0 * 0.36) ** 2)
    table = CliRunner().invoke(cli, ["compare", str(slow), str(fast), "--tolerance", "1e-9"],
                               env={"NO_COLOR": "1", "COLUMNS": "160"})
    assert table.exit_code == 1 and "training side by side" in table.stdout
    assert "params.w" in table.stdout and "DIFFERS" in table.stdout


def test_a_longer_trained_tensor_is_summarized_in_the_side_by_side_table(tmp_path):
    # tryout10 F8: a 16-element params.b wrapped in its narrow column, a lone "," on a line
    text = ("inputs:\n  b: {{value: {b}}}\noutputs:\n  loss: sum(b * b)\ntrain:\n  loss: loss\n"
            "  optimizer: {{name: sgd, lr: {lr}}}\n  steps: 1\n")
    b = [0.25 * k for k in range(16)]
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    one.write_text(text.format(b=b, lr=0.1))
    two.write_text(text.format(b=b, lr=0.2))
    table = CliRunner().invoke(cli, ["compare", str(one), str(two), "--tolerance", "1e-9"],
                               env={"NO_COLOR": "1", "COLUMNS": "120"})
    assert table.exit_code == 1, table.output
    rows = [line for line in table.stdout.splitlines() if "params.b" in line]
    after = np.array(b) * (1 - 2 * 0.1)  # sgd by hand: b <- b - lr * 2b
    assert len(rows) == 1 and f"max {after.max():.4g}" in rows[0]
    assert f"mean {after.mean():.4g}" in rows[0]
    assert not any(line.strip(" │|,") == "" and "," in line for line in table.stdout.splitlines())


@pytest.mark.parametrize("tolerance", ["nan", "-1"])
def test_a_tolerance_no_difference_could_meet_is_refused(tolerance):
    ste = str(Path(__file__).parents[2] / "experiments" / "ste_sign_quantize_grad.yaml")
    result = CliRunner().invoke(cli, ["compare", ste, ste, "--tolerance", tolerance])
    assert result.exit_code == 2
    assert f"--tolerance must be a number >= 0, not {tolerance.replace('-1', '-1.0')}" in result.stderr
