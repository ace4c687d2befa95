"""run --format json always carries spec-v1's keys, train and expect among them (a CI check
reads d["expect"]["passed"] on any spec): train null and an expect that passed with nothing
checked (declared false) for a spec without the blocks; compare's JSON keeps every key too."""
import csv
import io
import json

from click.testing import CliRunner

from gradcli.cli import cli

PLAIN = "name: plain\ninputs:\n  x: [1.0, -2.0]\noutputs:\n  y: sum(x * x)\n"
CONTRACT = {"name", "backend", "dtype", "seed", "values", "gradients", "summary", "train", "expect"}


def _run(tmp_path, text, *args):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    done = CliRunner().invoke(cli, ["run", str(path), *args])
    return done


def test_a_spec_without_train_or_expect_still_has_both_keys(tmp_path):
    done = _run(tmp_path, PLAIN, "--format", "json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert CONTRACT <= set(doc)
    assert doc["train"] is None
    assert doc["expect"] == {"passed": True, "failures": [], "declared": False}
    assert doc["gradients"]["y"]["x"]["overridden"] == [2.0, -4.0]  # d sum(x²)/dx = 2x


def test_a_spec_with_an_expect_block_says_it_declared_one(tmp_path):
    text = PLAIN + "expect:\n  values: {y: 5.0}\n"  # 1 + 4
    doc = json.loads(_run(tmp_path, text, "--format", "json").output)
    assert doc["expect"] == {"passed": True, "failures": [], "declared": True}
    failing = PLAIN + "expect:\n  values: {y: 7.0}\n"
    done = _run(tmp_path, failing, "--format", "json")
    assert done.exit_code == 1
    doc = json.loads(done.output)
    assert doc["expect"]["passed"] is False and doc["expect"]["declared"] is True
    assert len(doc["expect"]["failures"]) == 1


def test_the_csv_carries_passed_and_declared_and_markdown_no_empty_section(tmp_path):
    rows = list(csv.DictReader(io.StringIO(_run(tmp_path, PLAIN, "--format", "csv").output)))
    expect = {r["kind"]: r["value"] for r in rows if r["section"] == "expect"}
    assert expect == {"passed": "true", "declared": "false", "failure": "[]"}
    assert "### expect" not in _run(tmp_path, PLAIN, "--format", "markdown").output


def test_compare_json_has_every_key_when_nothing_trains(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(PLAIN)
    b.write_text(PLAIN.replace("plain", "other"))
    done = CliRunner().invoke(cli, ["compare", str(a), str(b), "--format", "json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert {"tolerance", "runs", "backends", "within_tolerance", "rows", "train", "curves"} <= set(doc)
    assert doc["train"] == [] and [c["train"] for c in doc["curves"]] == [None, None]
