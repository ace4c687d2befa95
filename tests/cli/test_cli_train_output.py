"""What a user sees of training: the JSON `train` document, the run's training table, the stopped note.

The TrainRecords are made by hand with numbers written here, so what is checked is the
layout (which number lands under which key, row and column), not another backend's loop.
A data set of 10 rows with test 0.2 leaves 8 training rows; batch_size 3 makes an epoch
ceil(8 / 3) = 3 steps, so step 7 is epoch 7/3 = 2.33.
"""
import io
import json

import numpy as np
from rich.console import Console

from gradcli import comparison, render, runner
from gradcli.backends.program import Nonfinite, TrainRecord
from gradcli.spec import load_spec_text
from gradcli.spec.model import DataSpec

SPEC = """name: classify
inputs:
  w: [1.0, 2.0]
outputs:
  loss: sum(w * w)
train:
  loss: loss
  optimizer: {name: sgd, lr: 0.1}
  steps: 2
"""

LOSS = [2.5, 2.0, 1.75, 1.5, 1.25, 1.0, 0.875]
ACC = {"train": [0.25, 0.5, 0.75, 0.875], "test": [0.0, 0.5, 0.5, 1.0]}


def experiment(*, data=True, text=SPEC):
    exp = load_spec_text(text, path="classify.yaml")
    fields = {n: getattr(exp, n) for n in exp._fields}
    if data:
        fields["data"] = DataSpec("X", "y", np.zeros((10, 2)), np.zeros(10, dtype=np.int64), 0.2,
                                  False, "rows.csv", exp.train.loc)
        spec = exp.train
        fields["train"] = type(spec)(**{**{n: getattr(spec, n) for n in spec._fields},
                                        "batch_size": 3, "epochs": 3, "steps": 7})
    return type(exp)(**fields)


def record(**changes):
    base = dict(loss=list(LOSS), params={}, gradients=[], final={"w": np.array([0.5, 0.25])},
                final_loss=0.8125, steps=7, epochs=3, eval_steps=[0, 3, 6, 7],
                metrics={"accuracy": {k: list(v) for k, v in ACC.items()}},
                final_metrics={"accuracy": {"train": 0.875, "test": 1.0}})
    base.update(changes)
    return TrainRecord(**base)


def result(train, exp=None):
    res = runner.run(experiment(data=False), numeric=False)  # a real Result around the record
    res.experiment = exp or experiment()
    res.train = train
    return res


BIRTH = Nonfinite("train", "Log", "log(w)", "classify.yaml:5:9", "loss", "nan", "-inf", 4)


def test_json_train_has_v1_and_v2_keys_exactly():
    doc = render.to_json(result(record()))["train"]
    assert list(doc) == ["loss", "final_loss", "params", "params_per_step", "gradients", "steps",
                         "epochs", "eval_steps", "metrics", "final", "stopped"]
    assert doc["loss"] == LOSS and doc["final_loss"] == 0.8125
    assert doc["params"] == {"w": [0.5, 0.25]}
    assert doc["steps"] == 7 and doc["epochs"] == 3 and doc["eval_steps"] == [0, 3, 6, 7]
    assert doc["metrics"] == {"accuracy": ACC}
    assert doc["final"] == {"loss": 0.8125, "accuracy": {"train": 0.875, "test": 1.0}}
    assert doc["stopped"] is None


def test_json_stopped_carries_a_nonfinite_record_shaped_as_the_top_level_ones():
    train = record(loss=[2.5, 2.0, 1.5, 1.0, float("nan")], steps=4, final_loss=float("nan"),
                   stopped={"step": 4, "reason": "non-finite loss", "nonfinite": BIRTH},
                   eval_steps=[0, 3, 4], metrics={"accuracy": {"train": [0.25, 0.5, float("nan")]}},
                   final_metrics={"accuracy": {"train": float("nan")}})
    res = result(train)
    res.nonfinite = [BIRTH]
    doc = json.loads(render.json_text([res]))
    assert doc["train"]["stopped"] == {"step": 4, "reason": "non-finite loss",
                                       "nonfinite": doc["nonfinite"][0]}
    assert doc["train"]["stopped"]["nonfinite"] == {
        "pass": "train", "op": "Log", "expr": "log(w)", "location": "classify.yaml:5:9",
        "tensor": "loss", "step": 4, "value": "NaN", "born": "-Infinity"}
    assert doc["train"]["final"] == {"loss": "NaN", "accuracy": {"train": "NaN"}}
    assert doc["train"]["metrics"] == {"accuracy": {"train": [0.25, 0.5, "NaN"]}}


def text_of(renderable, width=160) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def rows(text: str) -> list[list[str]]:
    """The table's header and body rows as lists of cells (box characters dropped)."""
    out = []
    for line in text.splitlines():
        if line[:1] in ("│", "┃"):
            out.append([c.strip() for c in line.strip("│┃").replace("┃", "│").split("│")])
    return out


def test_table_has_a_row_per_evaluation_the_last_one_final():
    text = text_of(render.train_table(result(record())))
    assert "training (7 steps, 3 epochs, loss loss)" in text
    body = rows(text)
    assert body[0] == ["step", "epoch", "loss", "accuracy (train)", "accuracy (test)"]
    assert body[1:] == [
        ["0", "0", "2.5", "0.25", "0"],
        ["3", "1", "1.5", "0.5", "0.5"],
        ["6", "2", "0.875", "0.75", "0.5"],
        ["7 (final)", "2.33", "0.8125", "0.875", "1"],  # after the last step: shown once
    ]


def test_a_long_run_without_metrics_shows_its_evaluation_points_not_every_step():
    loss = [1.0 / (k + 1) for k in range(10_000)]
    train = record(loss=loss, steps=10_000, epochs=None, eval_steps=list(range(0, 10_001, 1000)),
                   metrics={}, final_metrics={}, final_loss=1e-4)
    text = text_of(render.train_table(result(train, experiment(data=False))))
    assert "training (10000 steps, loss loss; shown: the steps of its evaluations)" in text
    body = rows(text)
    assert body[0] == ["step", "loss"]
    assert [r[0] for r in body[1:]] == [*(str(s) for s in range(0, 10_000, 1000)), "9999", "final"]
    assert body[2] == ["1000", f"{1 / 1001:.6g}"] and body[-2] == ["9999", "0.0001"]
    assert body[-1] == ["final", "0.0001"]


def test_a_long_run_is_thinned_by_a_round_stride():
    train = record(loss=[1.0] * 500, steps=500, epochs=None, eval_steps=[], metrics={},
                   final_metrics={})
    text = text_of(render.train_table(result(train, experiment(data=False))))
    assert "shown: one step in 25)" in text  # 500 / 20 rows
    assert [r[0] for r in rows(text)[1:]] == [*(str(s) for s in range(0, 500, 25)), "499", "final"]
    train = record(loss=[1.0] * 5000, steps=5000, epochs=None, eval_steps=list(range(5001)),
                   metrics={}, final_metrics={})
    text = text_of(render.train_table(result(train, experiment(data=False))))
    assert "shown: one evaluation in 250)" in text  # 5000 / 20
    assert [r[0] for r in rows(text)[1:]] == [*(str(s) for s in range(0, 5000, 250)), "4999", "final"]
    train = record(loss=[1.0] * 700, steps=700, epochs=None, eval_steps=[], metrics={},
                   final_metrics={})
    text = text_of(render.train_table(result(train, experiment(data=False))))
    assert "shown: one step in 50)" in text  # 700 / 20 = 35, rounded up to 50


def test_many_evaluations_are_thinned_too():
    n = 45  # evaluations at steps 0, 2, ..., 88; 45 / 20 -> one in 5 (a round stride)
    train = record(loss=[1.0] * 88, steps=88, eval_steps=list(range(0, 89, 2)),
                   metrics={"accuracy": {"train": [k / 100 for k in range(n)]}},
                   final_metrics={"accuracy": {"train": 0.5}}, final_loss=0.25)
    text = text_of(render.train_table(result(train)))
    assert "shown: one evaluation in 5)" in text
    body = rows(text)
    assert [r[0] for r in body[1:]] == [*(str(2 * k) for k in range(0, n, 5)), "88 (final)"]
    assert body[-1] == ["88 (final)", "29.33", "0.25", "0.44"]  # 88 steps of 3 an epoch


def test_a_stopped_run_says_where_and_why():
    train = record(loss=[2.5, 2.0, 1.5, 1.0, float("nan")], steps=4, final_loss=float("nan"),
                   stopped={"step": 4, "reason": "non-finite loss", "nonfinite": BIRTH},
                   eval_steps=[0, 3, 4], metrics={"accuracy": {"train": [0.25, 0.5, 0.5]}},
                   final_metrics={"accuracy": {"train": 0.5}})
    text = text_of(render.train_table(result(train)))
    assert ("training stopped at step 4: non-finite loss; -inf born at log(w)  "
            "classify.yaml:5:9 (op Log)") in text
    # the evaluation after the stopping step shows that step's batch loss, not the final loss:
    # two rows, not one
    assert rows(text)[-2][0] == "4" and rows(text)[-1] == ["final", "", "NaN", "0.5"]


def test_a_stopped_small_model_has_no_parameters_after_the_step_that_stopped():
    train = record(loss=[2.0, float("nan")], steps=1, epochs=None, eval_steps=[], metrics={},
                   final_metrics={}, params={"w": [np.array([0.5, 0.25])]}, final_loss=float("nan"),
                   stopped={"step": 1, "reason": "non-finite loss", "nonfinite": None})
    text = text_of(render.train_table(result(train, experiment(data=False))))
    assert rows(text) == [["step", "loss", "w after"], ["0", "2", "[0.5 , 0.25]"], ["1", "NaN", ""],
                          ["final", "NaN", "[0.5 , 0.25]"]]
    assert "training stopped at step 1: non-finite loss" in text


def test_spec_text_in_a_metric_name_is_escaped_in_the_table():
    train = record(metrics={"a\x1b[31m": {"train": [1.0, 1.0, 1.0, 1.0]}},
                   final_metrics={"a\x1b[31m": {"train": 1.0}})
    text = text_of(render.train_table(result(train)))
    assert "\x1b" not in text and "a\\x1b[31m (train)" in text


# ----- CSV and markdown hold what the JSON holds -----
def csv_rows(res):
    import csv

    from gradcli.render_formats import to_csv
    return list(csv.DictReader(io.StringIO(to_csv([res]))))


def cells(table, **where):
    return [(r["output"], r["step"], r["element"], r["value"]) for r in table
            if all(r[k] == str(v) for k, v in where.items())]


def test_csv_carries_steps_epochs_evaluations_metrics_final_and_stopped():
    train = record(stopped={"step": 6, "reason": "non-finite loss", "nonfinite": BIRTH})
    table = csv_rows(result(train))
    assert cells(table, section="train", kind="steps") == [("", "", "", "7")]
    assert cells(table, section="train", kind="epochs") == [("", "", "", "3")]
    assert cells(table, section="train", kind="eval_steps") == [
        ("", "0", "[0]", "0"), ("", "3", "[1]", "3"), ("", "6", "[2]", "6"), ("", "7", "[3]", "7")]
    assert cells(table, section="train", kind="metrics.train") == [
        ("accuracy", str(s), f"[{k}]", repr(v)) for k, (s, v) in enumerate(zip([0, 3, 6, 7], ACC["train"]))]
    assert [c[3] for c in cells(table, section="train", kind="metrics.test")] == \
        [repr(v) for v in ACC["test"]]
    assert cells(table, section="train", kind="final.loss") == [("", "", "", "0.8125")]
    assert cells(table, section="train", kind="final.train") == [("accuracy", "", "", "0.875")]
    assert cells(table, section="train", kind="final.test") == [("accuracy", "", "", "1.0")]
    assert cells(table, section="train", kind="stopped.step") == [("", "6", "", "6")]
    assert cells(table, section="train", kind="stopped.reason") == [("", "6", "", "non-finite loss")]
    assert cells(table, section="train", kind="stopped.nonfinite.expr") == [("", "6", "", "log(w)")]
    assert cells(table, section="train", kind="stopped.nonfinite.born") == [("", "6", "", "-Infinity")]
    assert [c[3] for c in cells(table, section="train", kind="loss")] == [repr(v) for v in LOSS]


def test_csv_says_a_run_that_did_not_stop_has_stopped_null():
    assert cells(csv_rows(result(record())), section="train", kind="stopped") == [("", "", "", "")]


def test_csv_spec_text_never_starts_a_formula_but_numbers_stay_numbers():
    text = SPEC.replace("name: classify", "name: '=HYPERLINK(\"http://x\")'\n"
                        "description: '@SUM(A1:A9)'")
    res = result(record(loss=[-1.5, float("-inf")], final_loss=-2.0,
                        metrics={"+m": {"train": [-0.5, 1.0, 1.0, 1.0]}},
                        final_metrics={"+m": {"train": -3.0}}),
                 experiment(text=text))
    table = csv_rows(res)
    assert {r["experiment"] for r in table} == {"'=HYPERLINK(\"http://x\")"}
    assert cells(table, section="run", kind="description") == [("", "", "", "'@SUM(A1:A9)")]
    assert [c[3] for c in cells(table, section="train", kind="loss")] == ["-1.5", "-Infinity"]
    assert cells(table, section="train", kind="final.train") == [("'+m", "", "", "-3.0")]
    assert cells(table, section="train", kind="final.loss") == [("", "", "", "-2.0")]


def test_markdown_has_the_evaluations_final_and_stopped():
    from gradcli.render_formats import to_markdown

    train = record(stopped={"step": 6, "reason": "non-finite loss", "nonfinite": BIRTH})
    text = to_markdown(result(train))
    assert "steps 7, epochs 3; final loss 0.8125, params {\"w\": [0.5, 0.25]}" in text
    # the evaluation after the last step (7 of 7) is the final row, once, as in run's table
    assert ("### training metrics\n\n| evaluation | step | accuracy (train) | accuracy (test) |\n"
            "|---|---|---|---|\n| 0 | 0 | 0.25 | 0.0 |\n| 1 | 3 | 0.5 | 0.5 |\n"
            "| 2 | 6 | 0.75 | 0.5 |\n| 3 | 7 (final) | 0.875 | 1.0 |\n\n") in text
    assert "| final |" not in text
    assert "training stopped at step 6: non-finite loss" in text
    assert "| train | Log | log(w) | classify.yaml:5:9 | loss | 4 | NaN | -Infinity |" in text


def test_markdown_keeps_the_final_row_of_a_run_stopped_before_its_last_evaluation():
    from gradcli.render_formats import to_markdown

    # stopped at step 4: its evaluation holds that step's batch loss, so the table has two rows
    train = record(loss=[2.5, 2.0, 1.5, 1.0, float("nan")], steps=4, final_loss=float("nan"),
                   stopped={"step": 4, "reason": "non-finite loss", "nonfinite": BIRTH},
                   eval_steps=[0, 3, 4], metrics={"accuracy": {"train": [0.25, 0.5, 0.5]}},
                   final_metrics={"accuracy": {"train": 0.625}})
    text = to_markdown(result(train))
    assert ("### training metrics\n\n| evaluation | step | accuracy (train) |\n|---|---|---|\n"
            "| 0 | 0 | 0.25 |\n| 1 | 3 | 0.5 |\n| 2 | 4 | 0.5 |\n| final |  | 0.625 |\n\n") in text


# ----- compare: curves side by side, a final table, and the JSON `curves` -----
def compared():
    from gradcli.render_compare import comparison_json, comparison_renderables

    a = result(record())
    b = result(record(loss=[3.0, 2.0, 1.0, 0.5], steps=4, epochs=2, eval_steps=[0, 3, 4],
                      metrics={"accuracy": {"train": [0.5, 0.625, 0.75]}}, final_loss=0.25,
                      final_metrics={"accuracy": {"train": 0.75}},
                      stopped={"step": 4, "reason": "non-finite loss", "nonfinite": BIRTH}))
    c = comparison.comparison([a, b], ["a", "b"], None)
    return comparison_renderables([c], None), json.loads(comparison_json([c], None))


def test_compare_json_carries_each_runs_curves_and_final_values():
    _, doc = compared()
    assert [k for k in doc if k != "tolerance"] == ["runs", "backends", "within_tolerance", "rows",
                                                    "train", "curves"]
    a, b = doc["curves"]
    assert a["run"] == "a" and b["run"] == "b"
    assert list(a["train"]) == ["steps", "epochs", "loss", "eval_steps", "metrics", "final", "stopped"]
    assert a["train"]["loss"] == LOSS and a["train"]["eval_steps"] == [0, 3, 6, 7]
    assert a["train"]["metrics"] == {"accuracy": ACC}
    assert b["train"]["final"] == {"loss": 0.25, "accuracy": {"train": 0.75}}
    assert b["train"]["stopped"]["step"] == 4 and b["train"]["stopped"]["nonfinite"]["expr"] == "log(w)"


def test_compare_tables_put_the_curves_and_final_values_side_by_side():
    parts, _ = compared()
    text = "".join(text_of(p) for p in parts)
    # the loss at the evaluations, as in run's table and the metric tables below: the batch
    # loss before the step, after the last step (a: 7, b: 4) the final whole-part loss
    loss = rows(text[text.index("training loss side by side"):])[:7]
    assert loss[1:] == [["0", "2.5", "3"], ["3", "1.5", "0.5"], ["4", "1.25", "0.25"],
                        ["6", "0.875", ""], ["7", "0.8125", ""], ["final", "0.8125", "0.25"]]
    start = text.index("accuracy (train) side by side")
    acc = rows(text[start:])
    assert acc[:7] == [["step", "a", "b"], ["0", "0.25", "0.5"], ["3", "0.5", "0.625"],
                       ["4", "", "0.75"], ["6", "0.75", ""], ["7", "0.875", ""],
                       ["final", "0.875", "0.75"]]
    start = text.index("accuracy (test) side by side")  # only a has it: its last row is final
    assert rows(text[start:])[1:6] == [["0", "0", ""], ["3", "0.5", ""], ["6", "0.5", ""],
                                       ["7 (final)", "1", ""], ["", "a", "b"]]
    start = text.index("training results side by side")
    assert rows(text[start:]) == [["", "a", "b"], ["steps", "7", "4"], ["epochs", "3", "2"],
                                  ["final loss", "0.8125", "0.25"],
                                  ["accuracy (train)", "0.875", "0.75"],
                                  ["accuracy (test)", "1", ""],
                                  ["stopped", "no", "step 4: non-finite loss"]]


def test_compare_shows_a_last_evaluation_that_is_every_runs_final_once():
    from gradcli.render_compare import comparison_renderables

    other = record(metrics={"accuracy": {"train": [0.125, 0.25, 0.5, 0.625],
                                         "test": [0.5, 0.5, 1.0, 0.5]}},
                   final_metrics={"accuracy": {"train": 0.625, "test": 0.5}})
    c = comparison.comparison([result(record()), result(other)], ["a", "b"], None)
    text = "".join(text_of(p) for p in comparison_renderables([c], None))
    start = text.index("accuracy (train) side by side")
    assert rows(text[start:])[:6] == [["step", "a", "b"], ["0", "0.25", "0.125"],
                                      ["3", "0.5", "0.25"], ["6", "0.75", "0.5"],
                                      ["7 (final)", "0.875", "0.625"], ["step", "a", "b"]]
    # the loss at each evaluation (before its step; after the last, the final loss): once too
    loss = rows(text[text.index("training loss side by side"):])
    assert loss[:6] == [["step", "a", "b"], ["0", "2.5", "2.5"], ["3", "1.5", "1.5"],
                        ["6", "0.875", "0.875"], ["7 (final)", "0.8125", "0.8125"],
                        ["step", "a", "b"]]


def test_the_progress_bar_is_drawn_only_on_a_terminal():
    from gradcli.cli_common import progress

    plain = Console(file=io.StringIO(), force_terminal=False)
    steps = range(5)
    assert progress(plain, False)(steps, description="training") is steps
    terminal = Console(file=io.StringIO(), force_terminal=True, width=80)
    assert progress(terminal, True)(steps, description="training") is steps  # --quiet
    assert list(progress(terminal, False)(iter(steps), description="training", total=5)) == [0, 1, 2, 3, 4]
    assert "training" in terminal.file.getvalue()
