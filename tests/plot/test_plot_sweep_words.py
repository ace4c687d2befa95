"""What a learning-curve figure of a real sweep says, read back from its artists, and that
no text is cut at its edge (audit11 P1, P2): the y label "loss" was cut in half at the left
edge, runs with fewer batches per epoch were said to "end early", a line over 1 of 6 seeds
was subtitled "over 6 seeds", and a spec without `name:` was titled by the directory.
What is expected is counted here with json from the run files the sweep wrote."""
import io
import json
from pathlib import Path

import numpy as np
import pytest
from blobs_fixture import blobs_spec
from click.testing import CliRunner

import gradcli.plot.sweep as sweep_module
from gradcli.cli import cli
from gradcli.plot import figure_bytes
from gradcli.plot.sweep import sweep_figure, sweep_series
from gradcli.plot.sweep_dir import load

NAMELESS = """inputs:
  w: {normal: [0, 1], shape: [3]}
outputs:
  loss: sum(square(w * 3.0 - 1.0))
train:
  optimizer: {name: sgd, lr: 0.01}
  steps: 3
  metrics:
    bad: mean(log(w))
sweep:
  seed: [0, 1, 2, 3, 4, 5]
"""
BATCHES = "sweep:\n  seed: [0, 1]\n  train.optimizer.lr: [0.1, 0.5]\n  train.batch_size: [10, 16]\n"


def swept(spec, out):
    result = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]


def drawn(monkeypatch, tmp_path, *args):
    """The Figure `plot sweep ARGS` draws (kept as the command makes it)."""
    kept = {}
    real = sweep_module.sweep_figure
    monkeypatch.setattr(sweep_module, "sweep_figure",
                        lambda t, s, text=None: kept.setdefault("fig", real(t, s, text)))
    result = CliRunner().invoke(cli, ["plot", "sweep", *map(str, args),
                                      "-o", str(tmp_path / "f.png")])
    assert result.exit_code == 0, result.output
    return kept["fig"]


def test_a_line_over_1_of_6_seeds_says_so_under_the_specs_own_name(tmp_path, monkeypatch):
    spec = tmp_path / "nsw.yaml"
    spec.write_text(NAMELESS)
    docs = swept(spec, tmp_path / "swN")
    finite = [sum(np.isfinite(float(d["train"]["metrics"]["bad"]["train"][k])) for d in docs)
              for k in range(4)]
    assert len(docs) == 6 and finite == [1] * 4  # log of a normal draw: 1 seed of 6 has w > 0
    fig = drawn(monkeypatch, tmp_path, tmp_path / "swN", "--x", "step", "--y", "bad.train")
    (ax,) = fig.axes
    assert fig._suptitle.get_text() == "nsw"  # as its runs are named, not "swN"
    assert {d["name"] for d in docs} == {"nsw"}
    assert ax.get_title() == "bad.train against training step: 1 of 6 seeds per point: no band"
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["mean (n=1)", f"{4 * 6 - sum(finite)} non-finite values left out"]
    assert not [c for c in ax.collections if str(c.get_gid()).startswith("band:")]


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    root = tmp_path_factory.mktemp("batches")
    docs = swept(blobs_spec(root, extra=BATCHES), root / "swA")
    return root / "swA", docs


def test_runs_with_fewer_batches_have_fewer_steps_and_the_subtitle_counts_them(batches):
    root, docs = batches
    steps = {d["params"]["train.batch_size"]: len(d["train"]["loss"]) for d in docs}
    assert steps[16] < steps[10] and all(d["train"]["stopped"] is None for d in docs)
    series = sweep_series(load(root), "step", "loss", "train.optimizer.lr")
    (ax,) = sweep_figure(load(root).name, series).axes
    short = sum(len(d["train"]["loss"]) < steps[10] for d in docs)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"{short} runs have fewer steps: later steps' means are over fewer runs" in texts
    assert not any("early" in t for t in texts)  # none stopped: all ran their 4 epochs
    # per lr: 2 seeds x 2 batch sizes at the first steps, the 2 runs of batch 10 after
    per_lr = 2 * 2
    assert " ".join(ax.get_title().split()) == (
        f"loss against training step: mean ± 1 std (ddof 1) over 2–{per_lr} of {per_lr} runs "
        "(2 seeds × 2 values of train.batch_size)")
    assert [t for t in texts if "(n=" in t] == [f"0.1 (n=2–{per_lr})", f"0.5 (n=2–{per_lr})"]


@pytest.mark.parametrize("args", [
    ("step", "loss", "train.optimizer.lr", None),          # a two-line subtitle (audit11 p2)
    ("step", "accuracy.test", None, None),
    ("train.optimizer.lr", "final_loss", "train.batch_size", None),
])
def test_no_text_is_cut_at_the_edges_of_the_png(batches, args):
    """A cut text leaves ink in the image's outermost pixels: they stay background white."""
    from PIL import Image
    root, _ = batches
    x, y, hue, _ = args
    data = figure_bytes(sweep_figure(load(root).name, sweep_series(load(root), x, y, hue)), "png")
    image = np.asarray(Image.open(io.BytesIO(data)).convert("L"))
    edges = np.concatenate([image[:2].ravel(), image[-2:].ravel(), image[:, :2].ravel(),
                            image[:, -2:].ravel()])
    assert edges.min() == 255, "ink at the figure's edge: a text is cut"


def test_a_sweep_with_set_name_is_titled_by_that_name_not_the_files_stem(tmp_path, monkeypatch):
    spec = tmp_path / "nsw.yaml"
    spec.write_text(NAMELESS.replace("[0, 1, 2, 3, 4, 5]", "[0, 1]"))
    result = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(tmp_path / "swS"),
                                      "--jobs", "1", "--set", "name=my sweep"])
    assert result.exit_code == 0, result.output
    docs = [json.loads(p.read_text()) for p in sorted((tmp_path / "swS" / "runs").glob("*.json"))]
    assert {d["name"] for d in docs} == {"my sweep"}  # as its runs are named
    fig = drawn(monkeypatch, tmp_path, tmp_path / "swS", "--x", "step", "--y", "loss")
    assert fig._suptitle.get_text() == "my sweep"  # was "nsw", the file's stem


def test_set_name_123_titles_the_figure_123_from_the_name_sweep_json_records(tmp_path,
                                                                             monkeypatch):
    """`--set name=123` names every run "123" (a --set value is read as YAML, the spec's
    name: as text); plot sweep re-read the recorded --set with YAML, got the number 123 and
    fell back to the file's stem. gradcli sweep now records the name it used."""
    spec = tmp_path / "nsw.yaml"
    spec.write_text(NAMELESS.replace("[0, 1, 2, 3, 4, 5]", "[0, 1]"))
    out = tmp_path / "sw123"
    result = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(out), "--jobs", "1",
                                      "--set", "name=123"])
    assert result.exit_code == 0, result.output
    docs = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    assert len(docs) == 2 and {d["name"] for d in docs} == {"123"}
    meta = json.loads((out / "sweep.json").read_text())
    # spec-v2's keys all kept, as they were; "name" beside them
    assert set(meta) == {"format", "spec", "spec_text", "keys", "runs", "set", "name"}
    assert meta["name"] == "123" and meta["set"] == ["name=123"]
    assert meta["format"] == "gradcli-sweep-1" and meta["spec_text"] == spec.read_text()
    fig = drawn(monkeypatch, tmp_path, out, "--x", "step", "--y", "loss")
    assert fig._suptitle.get_text() == "123"  # was "nsw", the file's stem


@pytest.mark.parametrize("sets, title", [([], "nsw"), (["--set", "name=my sweep"], "my sweep")])
def test_a_sweep_json_written_before_the_name_key_is_still_titled_and_resumed(
        tmp_path, monkeypatch, sets, title):
    """A directory from an earlier gradcli (sweep.json without "name") is titled as it was
    (the recorded --set name=, else the spec's stem), and the same command resumes it."""
    spec = tmp_path / "nsw.yaml"
    spec.write_text(NAMELESS.replace("[0, 1, 2, 3, 4, 5]", "[0, 1]"))
    out = tmp_path / "old"
    args = ["sweep", str(spec), "--out", str(out), "--jobs", "1", *sets]
    assert CliRunner().invoke(cli, args).exit_code == 0
    meta = json.loads((out / "sweep.json").read_text())
    del meta["name"]
    (out / "sweep.json").write_text(json.dumps(meta, indent=2) + "\n")
    fig = drawn(monkeypatch, tmp_path, out, "--x", "step", "--y", "loss")
    assert fig._suptitle.get_text() == title
    (out / "runs" / "1.json").unlink()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["0.json", "1.json"]
    assert "name" not in json.loads((out / "sweep.json").read_text())  # left as it was
    fig = drawn(monkeypatch, tmp_path, out, "--x", "step", "--y", "loss")
    assert fig._suptitle.get_text() == title


def test_the_example_sweep_directory_without_the_name_key_is_titled_by_its_specs_name(
        tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[2] / "docs" / "examples" / "ste-binary-weights-sweep"
    assert "name" not in json.loads((root / "sweep.json").read_text())
    fig = drawn(monkeypatch, tmp_path, root, "--x", "train.optimizer.lr", "--y", "final_loss")
    assert fig._suptitle.get_text() == "ste-binary-weights"
