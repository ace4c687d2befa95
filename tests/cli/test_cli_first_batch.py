"""A data spec's `values` and `gradients` tables are those of the first training batch, before
training (docs/data.md): a line under each says so, with the batch's row count, so that the
batch's size does not read as the data set's (tryout10 F8). Row counts from the csv itself."""
import csv
from pathlib import Path

from click.testing import CliRunner

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
BLOBS = ROOT / "experiments" / "data" / "two_blobs.yaml"
PLAIN = ROOT / "experiments" / "ste_sign_quantize_grad.yaml"


def table(*args) -> str:
    result = CliRunner().invoke(cli, ["run", *map(str, args)],
                                env={"NO_COLOR": "1", "COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_tables_of_a_data_spec_say_they_are_on_the_first_batch():
    with open(BLOBS.parent / "two_blobs.csv", newline="") as f:
        rows = len(list(csv.reader(f))) - 1  # the header
    training = rows - round(0.2 * rows)  # test: 0.2; one batch without train.batch_size
    out = table(BLOBS)
    assert out.count(f"on the first training batch ({training} rows of X), before training") == 2
    out = table(BLOBS, "--set", "expect=null", "--set",
                "train={optimizer: {name: sgd, lr: 0.5}, batch_size: 8, epochs: 1}")
    assert out.count("on the first training batch (8 rows of X), before training") == 2


def test_a_spec_without_data_has_no_such_line():
    assert "first training batch" not in table(PLAIN)


def test_the_report_says_it_too(tmp_path):
    page = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(BLOBS), str(PLAIN), "--output", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "<caption>values, on the first training batch (24 rows of X), before training" in text
    assert text.count("(24 rows of X), before training") == 2  # values, gradients; none for PLAIN
