"""A sweep's gradient statistics are taken where training starts, and say so; when the true
gradient is 0 in every run (sign's), the table and `report DIR` add that comparisons with it
are degenerate, and not otherwise (tryout10 F6). The true gradients are checked with numpy:
d/dw sum((sign(w) - t)^2) is 0 wherever w != 0; d/dw sum((tanh(w) - t)^2) is
2 (tanh(w) - t)(1 - tanh(w)^2), nonzero for these w."""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.sweep.stats import zero_true

SPEC = """\
name: ste
inputs:
  w: [0.3, -0.7, 1.2, -0.1]
  t: {{value: [1.0, -1.0, 0.5, 0.0], trainable: false}}
outputs:
  loss: sum(({op}(w) - t) ** 2)
override_map: {{{op}: identity}}
train: {{loss: loss, steps: 2, optimizer: {{name: sgd, lr: 0.1}}}}
sweep:
  seed: [0, 1]
  override_map.{op}: [identity, zero]
"""
W, T = np.array([0.3, -0.7, 1.2, -0.1]), np.array([1.0, -1.0, 0.5, 0.0])
NOTE = "the true gradient of loss/w is 0 in every run: comparisons with it are degenerate"
INITIAL = "at the inputs' initial values, before any training step"


def sweep(tmp_path, op: str):
    path = tmp_path / f"{op}.yaml"
    path.write_text(SPEC.format(op=op))
    out = tmp_path / f"{op}-out"
    result = CliRunner().invoke(cli, ["sweep", str(path), "--jobs", "1", "--out", str(out)],
                                env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    runs = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    assert len(runs) == 4
    want = np.zeros(4) if op == "sign" else 2 * (np.tanh(W) - T) * (1 - np.tanh(W) ** 2)
    for run in runs:  # the oracle: the true gradient at the initial w, with numpy
        true = np.asarray(run["gradients"]["loss"]["w"]["true"])
        np.testing.assert_allclose(true, want, rtol=1e-14, atol=0)
        assert (not true.any()) == (op == "sign")
    return " ".join(result.output.split()), out


def report(tmp_path, out) -> str:
    page = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(out), "--output", str(page)])
    assert result.exit_code == 0, result.output
    return page.read_text().replace("&#x27;", "'")


def test_a_zero_true_gradient_gets_the_note_in_the_table_and_the_report(tmp_path):
    text, out = sweep(tmp_path, "sign")
    assert NOTE in text and f"every gradient is taken {INITIAL}" in text
    page = report(tmp_path, out)
    assert f"Every gradient is taken {INITIAL}" in page and f"Note: {NOTE}" in page
    captions = [c for c in page.split("<figcaption>")[1:] if c.startswith("loss/w.")]
    assert captions and all(NOTE in c for c in captions)


def test_a_true_gradient_that_is_not_zero_gets_no_note(tmp_path):
    text, out = sweep(tmp_path, "tanh")
    assert f"every gradient is taken {INITIAL}" in text and "degenerate" not in text
    page = report(tmp_path, out)
    assert f"Every gradient is taken {INITIAL}" in page and "degenerate" not in page


def test_zero_true_asks_every_run_with_a_finite_true_gradient():
    def doc(true):
        return {"gradients": {"y": {"x": {"true": true, "overridden": [1.0, 2.0]}}}}
    assert zero_true([doc([0.0, -0.0]), doc([0.0, 0.0])]) == ["y/x"]
    assert zero_true([doc([0.0, 0.0]), doc([0.0, 1e-300])]) == []
    assert zero_true([doc([0.0, 0.0]), doc(["NaN", 0.0]), doc(None)]) == ["y/x"]
    assert zero_true([doc(None), {"error": "boom"}]) == []
    seen = {}  # group by group, as report DIR reads the runs
    zero_true([doc([0.0, 0.0])], seen)
    assert zero_true([doc([3.0, 0.0])], seen) == [] and seen == {"y/x": False}


def plot_notes(tmp_path, out, monkeypatch) -> list:
    """The legend's notes of `plot sweep OUT --x override_map.<op> --y loss/w.cosine`."""
    import gradcli.plot.sweep as sweep_module
    drawn = {}
    original = sweep_module.sweep_figure

    def keep(*args, **kwargs):
        drawn["fig"] = fig = original(*args, **kwargs)
        return fig
    monkeypatch.setattr(sweep_module, "sweep_figure", keep)
    key = next(k for k in json.loads((out / "sweep.json").read_text())["keys"]
               if k.startswith("override_map."))
    result = CliRunner().invoke(cli, ["plot", "sweep", str(out), "--x", key, "--y",
                                      "loss/w.cosine", "-o", str(tmp_path / "cos.png")])
    assert result.exit_code == 0, result.output
    return [" ".join(t.get_text().split()) for t in drawn["fig"].axes[0].get_legend().get_texts()]


def test_plot_sweep_of_a_gradient_column_carries_both_notes(tmp_path, monkeypatch):
    """A standalone plot sweep of loss/w.cosine said neither that the gradients are taken at
    the initial values nor that a zero true gradient makes the comparison degenerate, and
    drew the `zero` estimator at cosine 1 as the best (tryout12 3.5)."""
    _, out = sweep(tmp_path, "sign")
    notes = plot_notes(tmp_path, out, monkeypatch)
    assert any(n.startswith(f"gradients {INITIAL}") for n in notes), notes
    assert any(n.startswith(NOTE) for n in notes), notes
    _, out = sweep(tmp_path, "tanh")
    notes = plot_notes(tmp_path, out, monkeypatch)
    assert any(n.startswith(f"gradients {INITIAL}") for n in notes), notes
    assert not any("degenerate" in n for n in notes), notes
