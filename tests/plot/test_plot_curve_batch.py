"""plot curve on a spec with data (docs/data.md) says, under its title, that the curve is on the
first training batch, before training, in the run tables' words (tryout12 section 4: it said
nothing, so the batch's loss read as the data set's). Row counts from the csv itself."""
import csv
from pathlib import Path

import matplotlib
import pytest
from click.testing import CliRunner

import gradcli.plot.curve as curve_module
from gradcli.cli import cli

matplotlib.use("Agg")

ROOT = Path(__file__).parent.parent.parent
BLOBS = ROOT / "experiments" / "data" / "two_blobs.yaml"
PLAIN = ROOT / "experiments" / "ste_sign_quantize_grad.yaml"
BATCH_8 = ["--set", "expect=null", "--set",
           "train={optimizer: {name: sgd, lr: 0.5}, batch_size: 8, epochs: 1}"]


def training_rows() -> int:
    with open(BLOBS.parent / "two_blobs.csv", newline="") as f:
        rows = len(list(csv.reader(f))) - 1  # the header
    return rows - round(0.2 * rows)  # test: 0.2; one batch without train.batch_size


def subtitle(tmp_path, monkeypatch, spec, *args) -> str:
    """The line under the title of the figure `plot curve` draws."""
    kept = {}
    figure = curve_module.curve_figure

    def keep(data, text=None):
        kept["fig"] = fig = figure(data, text)
        return fig
    monkeypatch.setattr(curve_module, "curve_figure", keep)
    result = CliRunner().invoke(cli, ["plot", "curve", str(spec), "--points", "5", *args,
                                      "--output", str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.output
    return kept["fig"].axes[0].get_title().replace("\n", " ")


@pytest.mark.parametrize("args, rows", [((), None), (BATCH_8, 8)])
def test_a_data_spec_curve_says_it_is_on_the_first_batch(tmp_path, monkeypatch, args, rows):
    rows = rows or training_rows()
    said = f"on the first training batch ({rows} rows of X), before training"
    assert subtitle(tmp_path, monkeypatch, BLOBS, *args).endswith(said)
    # the same words as the run tables (one source: render.first_batch)
    run = CliRunner().invoke(cli, ["run", str(BLOBS), *args],
                             env={"NO_COLOR": "1", "COLUMNS": "300"})
    assert said in run.output


def test_a_spec_without_data_has_no_such_line(tmp_path, monkeypatch):
    assert "training batch" not in subtitle(tmp_path, monkeypatch, PLAIN)
