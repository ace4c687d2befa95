"""results.csv and the report from run documents: metric columns, failures, non-finite numbers."""
import csv
import io
import math
import types

import pytest

from gradcli.sweep.execute import failure_of
from gradcli.sweep.results import csv_text
from gradcli.sweep.stats import report


def doc(run, seed, lr, loss, acc_train, acc_test, cosine, error=None):
    d = {"run": run, "params": {"seed": seed, "train.optimizer.lr": lr},
         "train": {"final_loss": loss, "final": {"loss": loss,
                                                 "accuracy": {"train": acc_train, "test": acc_test}}},
         "summary": {"y": {"x": {"cosine": cosine, "max_abs_diff": 0.5, "sign_agreement": 1.0}}},
         "gradients": {"y": {"x": {"overridden": [1.0, 2.0], "true": [1.0, 0.0]}}}}
    if error:
        d.update(error=error, exit_code=1)
    return d


DOCS = [doc("0", 0, 0.1, 0.5, 0.9, 0.8, 1.0), doc("1", 1, 0.1, "NaN", 0.7, 0.6, 0.5, "expect: x"),
        doc("2", 0, 0.2, 0.25, 1.0, 0.5, 0.0)]


def test_csv_has_the_metric_columns_and_the_error_when_runs_have_them():
    rows = list(csv.reader(io.StringIO(csv_text(DOCS, ("seed", "train.optimizer.lr")))))
    assert rows[0] == ["run", "seed", "train.optimizer.lr", "final_loss", "final.accuracy.train",
                       "final.accuracy.test", "y/x.cosine", "y/x.max_abs_diff",
                       "y/x.sign_agreement", "error"]
    assert rows[2] == ["1", "1", "0.1", "NaN", "0.7", "0.6", "0.5", "0.5", "1.0", "expect: x"]


def test_report_groups_without_seed_and_a_nan_is_left_out_and_counted():
    groups = report(DOCS, ("seed", "train.optimizer.lr"))["groups"]
    assert [g["params"] for g in groups] == [{"train.optimizer.lr": 0.1},
                                             {"train.optimizer.lr": 0.2}]
    first = groups[0]
    assert first["n"] == 2 and first["failed"] == 1
    # run 1's loss is NaN: out of the mean and std, counted (run 0's 0.5 alone is left)
    assert first["columns"]["final_loss"] == {"mean": 0.5, "std": None, "n": 1, "nonfinite": 1}
    assert first["columns"]["final.accuracy.test"]["mean"] == pytest.approx(0.7)
    assert first["columns"]["final.accuracy.test"]["std"] == pytest.approx(0.1414213562373095)
    assert groups[1]["columns"]["final_loss"] == {"mean": 0.25, "std": None,  # one run: no std
                                                  "n": 1, "nonfinite": 0}
    assert first["gradients"]["y"]["x"] == {"grad_mean_norm": pytest.approx(math.sqrt(5)),
                                            "grad_std": 0.0, "bias": 2.0,
                                            "cosine_of_means": pytest.approx(1 / math.sqrt(5)),
                                            "n": 2, "nonfinite": 0}


def test_a_non_finite_stop_and_an_unmet_expect_are_failures():
    stopped = types.SimpleNamespace(train=types.SimpleNamespace(
        stopped={"step": 17, "reason": "non-finite loss"}), expect=None)
    assert failure_of(stopped) == ("stopped", "training stopped at step 17: non-finite loss")
    unmet = types.SimpleNamespace(train=None, expect=types.SimpleNamespace(
        passed=False, failures=["values.y: expected 1, got 2"]))
    assert failure_of(unmet) == ("expect", "expect: values.y: expected 1, got 2")
    fine = types.SimpleNamespace(train=types.SimpleNamespace(stopped=None), expect=None)
    assert failure_of(fine) is None


def test_metrics_come_from_the_training_record_when_the_json_lacks_them():
    from gradcli.sweep.execute import digest_of

    record = types.SimpleNamespace(final_metrics={"accuracy": {"train": 0.75, "test": 0.5}})
    result = types.SimpleNamespace(train=record, gradients={})
    digest = digest_of({"run": "0", "params": {}, "train": {"final_loss": 0.25}}, result)
    assert digest["train"]["final"] == {"loss": 0.25, "accuracy": {"train": 0.75, "test": 0.5}}
    rows = list(csv.reader(io.StringIO(csv_text([digest], ()))))
    assert rows == [["run", "final_loss", "final.accuracy.train", "final.accuracy.test", "error"],
                    ["0", "0.25", "0.75", "0.5", ""]]
