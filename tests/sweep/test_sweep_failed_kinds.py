"""A sweep's report says what kind of failure its failed runs had: an unmet expect (the run
kept its result, which is averaged) is not counted as a crash, in the table and the HTML.

The kind is the run record's "failure" field, written where the run ends (note8: the report
matched the start of the error text); a directory written before the field existed (its run
files without it) is still reported and resumed, its kinds read from the error text."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
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


def sweep(tmp_path, *args):
    path = tmp_path / "kinds.yaml"
    path.write_text(SPEC)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["sweep", str(path), "--out", str(out), "--jobs", "1", *args])
    return out, result


def run_files(out) -> dict:
    return {p.stem: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}


def unmet(doc) -> bool:
    """numpy, the oracle for which runs meet the expect (y = sum(c x^2) against sum(x^2))."""
    x = np.array(X)
    c = doc["params"]["inputs.c.value"]
    assert doc["values"]["y"] == float(np.sum(c * x * x))
    return float(np.sum(c * x * x)) != float(np.sum(x * x))


def html_report(tmp_path, out) -> str:
    report = tmp_path / "r.html"
    html = CliRunner().invoke(cli, ["report", str(out), "--output", str(report)])
    assert html.exit_code in (0, 1), html.output
    return report.read_text()


def test_unmet_expects_are_counted_as_such_in_the_table_and_the_report(tmp_path):
    out, result = sweep(tmp_path)
    assert result.exit_code == 1, result.output
    runs = run_files(out)
    for doc in runs.values():
        assert ("error" in doc) == unmet(doc)
        assert doc.get("failure") == ("expect" if unmet(doc) else None)
    text = " ".join(result.output.split())
    assert "(2 failed expect)" in text and "(2 failed)" not in text
    assert '<span class="error">2 failed expect</span>' in html_report(tmp_path, out)
    with open(out / "results.csv", newline="") as f:  # spec-v2's columns, no new one
        assert next(csv.reader(f)) == ["run", "inputs.c.value", "seed", "y/x.cosine",
                                       "y/x.max_abs_diff", "y/x.sign_agreement", "error"]


def test_the_report_reads_the_kind_from_the_field_not_the_error_text(tmp_path):
    out, _ = sweep(tmp_path)
    for name, doc in run_files(out).items():  # the text says expect, the field says stopped
        if doc.get("error"):
            doc["failure"] = "stopped"
            (out / "runs" / f"{name}.json").write_text(json.dumps(doc))
    assert '<span class="error">2 stopped</span>' in html_report(tmp_path, out)
    again = CliRunner().invoke(cli, ["sweep", str(tmp_path / "kinds.yaml"), "--out", str(out),
                                     "--jobs", "1", "--format", "json"])
    assert again.exit_code == 1, again.output
    failures = {r["run"]: r.get("failure") for r in json.loads(again.stdout)["runs"]}
    assert sorted(map(str, failures.values())) == ["None", "None", "stopped", "stopped"]
    _, table = sweep(tmp_path)  # every run is there: the table is made from the run files
    assert "(2 stopped)" in " ".join(table.output.split()), table.output


def test_a_directory_written_before_the_field_is_still_reported_and_resumed(tmp_path):
    out, first = sweep(tmp_path)
    for name, doc in run_files(out).items():  # as the previous version wrote them
        doc.pop("failure", None)
        (out / "runs" / f"{name}.json").write_text(json.dumps(doc))
    assert '<span class="error">2 failed expect</span>' in html_report(tmp_path, out)
    (out / "runs" / "0.json").unlink()  # one run left to do: resuming runs it alone
    _, resumed = sweep(tmp_path)
    assert resumed.exit_code == 1, resumed.output
    assert " ".join(resumed.output.split()).count("(2 failed expect)") == 1
    assert "failure" not in run_files(out)["1"] and set(run_files(out)) == {"0", "1", "2", "3"}


def test_failed_text_counts_each_kind():
    from gradcli.render_sweep import failed_text
    assert failed_text(["expect", "stopped", "error", "expect"]) == \
        "1 failed, 2 failed expect, 1 stopped"


@pytest.mark.parametrize("record, kind", [
    ({"error": "expect: values.y: expected 1, got 2"}, "expect"),  # before the field: the text
    ({"error": "training stopped at step 3: non-finite loss"}, "stopped"),
    ({"error": "spec.yaml:3:4: mul() failed"}, "error"),
    ({"error": "expect: y", "failure": "stopped"}, "stopped"),  # the field wins
    ({"error": "training stopped at step 3", "failure": ["planted"]}, "stopped"),  # not a kind
    ({"error": "", "failure": "expect"}, None),  # no error, no failure
])
def test_failure_kind_reads_the_field_else_the_older_error_text(record, kind):
    from gradcli.sweep.failures import failure_kind
    assert failure_kind(record) == kind
