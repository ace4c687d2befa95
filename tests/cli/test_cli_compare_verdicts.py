"""compare's verdict is not excused by a note about something else (tryout6 finding 1) and
float32's rounding allowance is per element (finding 1b).

The gradients are checked against numpy (and torch / TensorFlow called directly), the
verdicts against the gap those oracles show.
"""
import json

import numpy as np
import tensorflow as tf
import torch
from click.testing import CliRunner

from gradcli import comparison
from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "400"}
ROUNDED = """name: {name}
backend: tensorflow
inputs:
  w: [0.2, 0.9, -0.7, 0.05]
  t: {{value: [1.0, -1.0, 2.0, 0.0], trainable: false}}
override_map:
  round: {gradient}
let:
  q: round(w * 3.0) / 3.0
outputs:
  loss: sum((q * 2.0 - t) ** 2)
train: {{loss: loss, optimizer: {{name: sgd, lr: 0.1}}, steps: 3}}
"""


def ste_gradients(w, t, gradient: str) -> np.ndarray:
    """d loss/d w with round's gradient replaced, by the chain rule in numpy."""
    q = np.round(w * 3.0) / 3.0
    upstream = 2.0 * (q * 2.0 - t) * 2.0 / 3.0 * 3.0  # d loss/d round(3w) * d(3w)/dw
    return upstream * (1.0 if gradient == "identity" else (np.abs(w * 3.0) <= 1.0))


def test_a_none_true_gradient_note_excuses_no_gap_of_the_overridden_gradients(run_compare):
    result = run_compare({g: ROUNDED.format(name=g, gradient=g)
                          for g in ("identity", "hardtanh")}, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    w, t = np.array([0.2, 0.9, -0.7, 0.05]), np.array([1.0, -1.0, 2.0, 0.0])
    expected = [ste_gradients(w, t, g) for g in ("identity", "hardtanh")]
    # TensorFlow's own tape: no gradient for round (the note's subject), not for the override
    wt = tf.Variable(w)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((tf.round(wt * 3.0) / 3.0 * 2.0 - t) ** 2)
    assert tape.gradient(loss, wt) is None
    row = doc["rows"][0]
    np.testing.assert_allclose(row["overridden"], expected, rtol=1e-12)
    assert row["max_diff"] == np.max(np.abs(expected[0] - expected[1]))
    assert row["within"] is False and row["excused"] is False
    assert any("gives None" in n for n in row["notes"])  # still shown, as information
    assert doc["within_tolerance"] is False
    assert all(r["within"] is False and r["excused"] is False for r in doc["train"])


def test_a_tie_note_excuses_no_gap_away_from_the_tie(run_compare):
    spec = "name: {n}\nbackend: torch\ninputs:\n  x: [1.0, 2.0, 0.5]\noutputs:\n  y: {e}\n"
    result = run_compare({
        "a": spec.format(n="a", e="sum(maximum(x, 1.0) * [1.0, 2.0, 3.0])"),
        "b": spec.format(n="b", e="sum(maximum(x, 1.0) * [1.0, 50.0, 3.0])")}, "--format", "json")
    assert result.exit_code == 1, result.output
    row = json.loads(result.stdout)["rows"][0]
    x = np.array([1.0, 2.0, 0.5])
    for c, got in zip(([1.0, 2.0, 3.0], [1.0, 50.0, 3.0]), row["overridden"]):
        xt = torch.tensor(x, requires_grad=True)
        (torch.maximum(xt, torch.tensor(1.0, dtype=torch.float64)) * torch.tensor(c)).sum().backward()
        untied = x != 1.0  # torch splits the tie at element 0, TensorFlow gives all of it to x
        np.testing.assert_array_equal(np.asarray(got)[untied], xt.grad.numpy()[untied])
    assert row["max_diff"] == 48.0 and row["notes"] and row["excused"] is False


def test_float32_rounding_is_allowed_per_element_not_from_the_largest(run_compare):
    spec = "name: {n}\ndtype: float32\ninputs:\n  w: [1.0, 1.0]\noutputs:\n  y: sum(w * {c})\n"
    texts = {"a": spec.format(n="a", c="[10000.0, 0.001]"), "b": spec.format(n="b", c="[10000.0, 0.15]")}
    result = run_compare(texts, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    expected = [np.array([1e4, 1e-3], np.float32), np.array([1e4, 0.15], np.float32)]
    np.testing.assert_array_equal(np.asarray(doc["rows"][0]["overridden"], np.float32), expected)
    assert doc["rows"][0]["within"] is False
    table = run_compare(texts)
    assert "≤ 1e-06 + 2e-05·|first|" in table.stdout and "DIFFERS" in table.stdout


def made(name, overridden, dtype):
    from types import SimpleNamespace

    from gradcli.runner import GradientRow, Result
    exp = SimpleNamespace(name=name, dtype=dtype, train=None)
    return Result(exp, "numpy", {}, {"y": {"x": GradientRow(overridden, overridden, None, "skipped")}},
                  {}, [])


def test_float32_allowance_is_relative_to_each_element():
    big, small = np.float32(10000.0), np.float32(0.001)
    ulp = [float(big), float(np.nextafter(small, np.float32(1)))]  # one ulp off each element
    rows, ok = comparison.compare([made("a", [float(big), float(small)], "float32"),
                                   made("b", ulp, "float32")], 0.0)
    assert ok is True and rows[0].within is True
    far = [float(big) * (1 + 1e-4), float(small)]  # 5x the allowance on the big element
    rows, ok = comparison.compare([made("a", [float(big), float(small)], "float32"),
                                   made("b", far, "float32")], 0.0)
    assert ok is False and rows[0].excused is False
    doubled = [float(big), float(small) * 2]  # the small element's own gap is 100%
    rows, ok = comparison.compare([made("a", [float(big), float(small)], "float32"),
                                   made("b", doubled, "float32")], 1e-6)
    assert ok is False and rows[0].within is False


SQRT = """name: {name}
backend: torch
inputs:
  x: [0.0, 0.0]
outputs:
  y: {sign}sum(sqrt(x))
wrt: [x]
"""


def test_an_infinity_against_the_opposite_infinity_is_no_edge_a_note_excuses(run_compare):
    """review6 finding 1: sqrt's note (NaN against 0 at x <= 0) once excused +inf against -inf."""
    result = run_compare({"pos": SQRT.format(name="pos", sign=""),
                          "neg": SQRT.format(name="neg", sign="-")}, "--format", "json")
    assert result.exit_code == 1, result.output
    row = json.loads(result.stdout)["rows"][0]
    x = torch.zeros(2, requires_grad=True)
    torch.sqrt(x).sum().backward()  # torch's own gradient at 0: +inf, and -inf for the negated sum
    assert x.grad.tolist() == [np.inf, np.inf]
    assert row["overridden"] == [["Infinity", "Infinity"], ["-Infinity", "-Infinity"]]
    assert row["notes"] and row["excused"] is False


TRAIN_SQRT = """name: train-sqrt
inputs:
  w: [0.0, 1.0]
  c: {value: [0.0, 1.0], trainable: false}
outputs:
  loss: sum(sqrt(w) * c)
wrt: [w]
train: {loss: loss, optimizer: {name: sgd, lr: 0.1}, steps: 4}
"""


def test_a_run_stopped_early_by_a_noted_nan_gets_one_verdict_on_every_training_row(tmp_path):
    """review6 finding 5: the gradient row is excused (torch's NaN at sqrt(0) times 0, TF's 0),
    but torch's training then stops at step 1; its loss, final loss and parameters all differ."""
    path = tmp_path / "t.yaml"
    path.write_text(TRAIN_SQRT)
    result = CliRunner().invoke(cli, ["compare", str(path), "--backends", "numpy,torch",
                                      "--tolerance", "1e-6", "--format", "json"], env=ENV)
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    w = torch.tensor([0.0, 1.0], requires_grad=True)
    (torch.sqrt(w) * torch.tensor([0.0, 1.0])).sum().backward()
    assert np.isnan(w.grad[0].item()) and w.grad[1].item() == 0.5
    assert doc["rows"][0]["excused"] is True
    assert {r["quantity"]: r["excused"] for r in doc["train"]} == {
        "loss": False, "final_loss": False, "params.w": False}
