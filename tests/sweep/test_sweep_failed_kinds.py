"""A sweep's report says what kind of failure its failed runs had: an unmet expect (the run
kept its result, which is averaged) is not counted as a crash, in the table and the HTML."""
from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

X = [0.5, -1.5, 2.0]
SPEC = f"""\
name: kinds
inputs:
  x: {X}
  c: {{value: 1.0, trainable: false}}
outputs:
  y: sum(c * x * x)
expect:
  values: {{y: {float(np.sum(np.square(X)))!r}}}
sweep:
  inputs.c.value: [1.0, 2.0]
  seed: [0, 1]
"""


def test_unmet_expects_are_counted_as_such_in_the_table_and_the_report(tmp_path):
    path = tmp_path / "kinds.yaml"
    path.write_text(SPEC)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["sweep", str(path), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 1, result.output
    runs = {p.stem: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}
    x = np.array(X)
    for doc in runs.values():  # numpy is the oracle for which runs meet the expect
        c = doc["params"]["inputs.c.value"]
        assert doc["values"]["y"] == float(np.sum(c * x * x))
        assert ("error" in doc) == (float(np.sum(c * x * x)) != float(np.sum(x * x)))
    text = " ".join(result.output.split())
    assert "(2 failed expect)" in text and "(2 failed)" not in text
    report = tmp_path / "r.html"
    html = CliRunner().invoke(cli, ["report", str(out), "--output", str(report)])
    assert html.exit_code in (0, 1), html.output
    assert '<span class="error">2 failed expect</span>' in report.read_text()


def test_failed_text_counts_each_kind():
    from gradcli.render_sweep import failed_text
    errors = ["expect: values.y: expected 1, got 2", "training stopped at step 3: non-finite loss",
              "spec.yaml:3:4: mul() failed", "expect: values.y: expected 1, got 3"]
    assert failed_text(errors) == "1 failed, 2 failed expect, 1 stopped"
