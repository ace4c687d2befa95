"""gradcli report: the run's training table (per evaluation, epochs, metrics, stopped note) and
no page at all when nothing could be reported.

The reference for the numbers is the JSON of `gradcli run --format json` of the same spec (the
training numbers themselves are checked against torch / numpy in the training tests); what is
checked here is that the page shows them, row by row and column by column. Epochs are worked out
here from the data's size by hand.
"""
import html
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
DIGITS = ROOT / "experiments" / "binaryconnect_digits.yaml"
BLOBS = ROOT / "experiments" / "data" / "two_blobs.yaml"
# two_blobs: 30 rows, test 0.2 -> 24 training rows; batch_size 8 -> 3 steps per epoch
BLOBS_TRAIN = """
train:
  loss: loss
  optimizer: {name: sgd, lr: 0.5}
  batch_size: 8
  epochs: 25
  metrics:
    accuracy: mean(cast((z > 0) == (y > 0), dtype(z)))
    logloss: mean(softplus(z) - cast(y, dtype(z)) * z)
"""
# w = 1 - 2 * (1 / 1) = -1 after step 0: log(-1) is NaN at step 1, and training stops there
STOPS = """name: stops
inputs: {w: 1.0}
outputs:
  loss: log(w)
train:
  loss: loss
  optimizer: {name: sgd, lr: 2.0}
  steps: 5
  metrics: {double: 2 * w}
"""


def report(tmp_path, spec, *sets) -> tuple[int, str]:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(spec), *sets, "--output", str(out)])
    assert result.exit_code in (0, 1), result.stderr  # 1: an expect not met is still a page
    return result.exit_code, out.read_text(encoding="utf-8")


def run_json(spec, *sets) -> dict:
    result = CliRunner().invoke(cli, ["run", str(spec), *sets, "--format", "json"])
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)["train"]


def training_table(page: str) -> tuple[str, list[str], list[list[str]], str]:
    """(caption, header, rows of cell texts, what follows the table) of the page's training table."""
    start = page.index("<table><caption>training")
    table, after = page[start:].split("</table>", 1)
    cells = lambda tag, text: [html.unescape(c) for c in re.findall(
        rf"<{tag} [^>]*>(.*?)</{tag}>", text)]
    caption = html.unescape(re.search(r"<caption>(.*?)</caption>", table).group(1))
    rows = [cells("td", row) for row in table.split("<tr>")[2:]]
    return caption, cells("th", table), rows, after.split("<figure>")[0].split("</section>")[0]


def number(value) -> str:
    """A float as the terminal's tables show it: 6 significant digits; NaN from JSON as NaN."""
    return {"NaN": "NaN", "Infinity": "inf", "-Infinity": "-inf"}.get(value, None) or f"{value:.6g}"


def epoch(step: int, per_epoch: int) -> str:
    whole, part = divmod(step, per_epoch)
    return str(whole) if part == 0 else f"{step / per_epoch:.2f}"


def expected_rows(train: dict, per_epoch: int | None, shown: list[int]) -> list[list[str]]:
    parts = [(m, p) for m in train["metrics"] for p in ("train", "test") if p in train["metrics"][m]]
    rows = []
    # an evaluation after the last step is the final row, shown once
    merged = train["eval_steps"][-1] >= len(train["loss"])
    for k in shown:
        step = train["eval_steps"][k]
        loss = train["loss"][step] if step < len(train["loss"]) else train["final"]["loss"]
        metric = [train["metrics"][m][p][k] if k < len(train["metrics"][m][p]) else None
                  for m, p in parts]
        last = merged and k == len(train["eval_steps"]) - 1
        rows.append([f"{step} (final)" if last else str(step),
                     *([epoch(step, per_epoch)] if per_epoch else []), number(loss),
                     *("—" if v is None else number(v) for v in metric)])
    if not merged:
        rows.append(["final", *([""] if per_epoch else []), number(train["final"]["loss"]),
                     *(number(train["final"][m][p]) for m, p in parts)])
    return rows


def test_binaryconnect_digits_page_shows_runs_training_table(tmp_path):
    code, page = report(tmp_path, DIGITS, "--set", "train.epochs=1")
    train = run_json(DIGITS, "--set", "train.epochs=1")
    caption, head, rows, after = training_table(page)
    # digits: 1797 rows, test 0.25 -> 1797 - 449 = 1348 training rows; batch 64 -> 22 steps
    assert train["steps"] == 22 and train["eval_steps"] == [0, 22]
    assert caption == "training (22 steps, 1 epoch, loss loss)"
    assert head == ["step", "epoch", "loss", "accuracy (train)", "accuracy (test)"]
    assert rows == expected_rows(train, 22, [0, 1])
    assert rows[-1][2] != rows[0][2]  # trained: the final loss is not the first batch's
    assert "the batch loss before that step" in after and "metrics on the training and test" in after
    assert "after</th>" not in page  # no parameter columns once there are metrics


def test_two_blobs_with_a_train_block_every_evaluation_thinned_as_in_the_terminal(tmp_path):
    shutil.copy(BLOBS.parent / "two_blobs.csv", tmp_path)
    spec = tmp_path / "blobs.yaml"
    spec.write_text(BLOBS.read_text().split("expect:")[0] + BLOBS_TRAIN)
    code, page = report(tmp_path, spec)
    assert code == 0
    train = run_json(spec)
    # 25 epochs of 3 steps; 26 evaluations (> 20 rows) -> every 2nd, plus the last one
    assert train["steps"] == 75 and train["eval_steps"] == list(range(0, 76, 3))
    caption, head, rows, _ = training_table(page)
    assert caption == "training (75 steps, 25 epochs, loss loss; shown: one evaluation in 2)"
    assert head == ["step", "epoch", "loss", "accuracy (train)", "accuracy (test)",
                    "logloss (train)", "logloss (test)"]
    assert rows == expected_rows(train, 3, [*range(0, 26, 2), 25])
    assert rows[1][:2] == ["6", "2"] and rows[-1][:2] == ["75 (final)", "25"]


def test_a_stopped_run_shows_where_and_why_and_its_nan_loss_is_marked(tmp_path):
    spec = tmp_path / "stops.yaml"
    spec.write_text(STOPS)
    code, page = report(tmp_path, spec)
    train = run_json(spec)
    assert train["stopped"]["step"] == 1 and train["loss"][1] == "NaN"
    caption, head, rows, after = training_table(page)
    assert head == ["step", "loss", "double (train)"]  # no data: no epoch column, one part
    assert rows == expected_rows(train, None, range(len(train["eval_steps"])))
    # by hand: log(1) = 0 and 2w = 2; then w = -1: log(-1) NaN, 2w = -2 (the final row too)
    assert rows == [["0", "0", "2"], ["1", "NaN", "-2"], ["final", "NaN", "-2"]]
    assert page.count('<td class="bad">NaN</td>') == 2  # marked as the terminal marks them
    assert ('<p class="error">training stopped at step 1: non-finite loss; NaN born at log(w)  '
            f"{html.escape(str(spec))}:4:9 (op log)</p>") in after


@pytest.mark.parametrize("names", [["nodir"], ["nodir", "bad.yaml"]])
def test_nothing_reported_writes_nothing_and_keeps_an_old_page(tmp_path, names):
    (tmp_path / "bad.yaml").write_text("name: bad\ninputs: {x: 1.0}\noutputs:\n  y: nosuchop(x)\n")
    out = tmp_path / "report.html"
    args = ["report", *(str(tmp_path / n) for n in names), "--output", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert f"nothing to report: {out} not written" in result.stderr and "wrote" not in result.stdout
    assert not out.exists()
    out.write_text("the page from before")
    assert CliRunner().invoke(cli, args).exit_code == 2
    assert out.read_text() == "the page from before"
