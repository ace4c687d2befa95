"""Two specs that keep one `name:` (a copied spec) are told apart as `name #0`, `name #1` in
every compare format (table, JSON runs, CSV, markdown) and in plot train's title and legend:
one rule (gradcli.labels.told_apart), so the formats never disagree."""
import csv
import io
import json

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """name: twin
inputs:
  x: [1.0, -2.0]
outputs:
  y: sum(x * x * {k})
"""


def _specs(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(SPEC.format(k=1.0))
    b.write_text(SPEC.format(k=3.0))
    return [str(a), str(b)]


def _compare(tmp_path, *extra):
    done = CliRunner().invoke(cli, ["compare", *_specs(tmp_path), *extra])
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize("fmt", ["json"])
def test_compare_json_runs_and_curves_name_each_run_once(tmp_path, fmt):
    doc = json.loads(_compare(tmp_path, "--format", fmt))
    assert doc["runs"] == ["twin #0", "twin #1"]
    assert [c["run"] for c in doc["curves"]] == ["twin #0", "twin #1"]
    # the numbers stay each run's own: y = k * sum(x^2), so dy/dx = 2 k x (numpy oracle)
    row = doc["rows"][0]
    assert row["overridden"] == [[2.0, -4.0], [6.0, -12.0]]


def test_compare_csv_labels_each_run_once(tmp_path):
    rows = list(csv.DictReader(io.StringIO(_compare(tmp_path, "--format", "csv"))))
    labels = {r["label"] for r in rows if r["label"]}
    assert {"twin #0", "twin #1"} <= labels and "twin" not in labels


def test_compare_markdown_keeps_its_headers(tmp_path):
    out = _compare(tmp_path, "--format", "markdown")
    assert "| twin #0 | twin #1 |" in out
    assert "#0 #0" not in out


def test_compare_table_columns_name_each_run_once(tmp_path):
    out = _compare(tmp_path)
    assert "twin #0" in out and "twin #1" in out


def test_one_spec_given_twice_is_told_apart(tmp_path):
    path = _specs(tmp_path)[0]
    done = CliRunner().invoke(cli, ["compare", path, path, "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["runs"] == ["twin #0", "twin #1"]


def test_distinct_names_are_left_as_they_are(tmp_path):
    a, b = _specs(tmp_path)
    (tmp_path / "b.yaml").write_text(SPEC.format(k=3.0).replace("twin", "other"))
    done = CliRunner().invoke(cli, ["compare", a, b, "--format", "json"])
    assert json.loads(done.output)["runs"] == ["twin", "other"]


def test_plot_train_title_and_legend_tell_the_runs_apart(tmp_path, monkeypatch):
    from gradcli.plot import train as plot_train
    figures = []
    real = plot_train.train_figure

    def keep(title, runs, units=None, text=None):
        fig = real(title, runs, units, text)
        figures.append(fig)
        return fig
    monkeypatch.setattr(plot_train, "train_figure", keep)
    specs = []
    for file in ("a.yaml", "b.yaml"):
        path = tmp_path / file
        path.write_text(SPEC.format(k=1.0) + "train: {loss: y, optimizer: {name: sgd, lr: 0.1}, "
                                             "steps: 2}\n")
        specs.append(str(path))
    done = CliRunner().invoke(cli, ["plot", "train", *specs, "--output", str(tmp_path / "t.png")])
    assert done.exit_code == 0, done.output
    (fig,) = figures
    assert fig._suptitle.get_text() == "twin #0 vs twin #1"
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "twin #0" in legend and any(t.startswith("twin #1") for t in legend)
    assert "twin" not in legend
