"""--quiet: one unwrapped line per spec on stderr; the tool formats stay whole; no --output."""
import json

from click.testing import CliRunner

from gradcli.cli import cli

FAILING = ("name: {name}\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: sum(x * x)\n"
           "expect:\n  values: {{y: 15.0}}\n  gradients: {{y: {{x: [2, 4, 7]}}}}\n")


def spec(tmp_path, name="a-rather-long-experiment-name-that-fills-the-line"):
    path = tmp_path / "s.yaml"
    path.write_text(FAILING.format(name=name))
    return str(path)


def test_a_failed_line_is_never_wrapped(tmp_path):
    result = CliRunner().invoke(cli, ["run", spec(tmp_path), "-q"], env={"COLUMNS": "80"})
    assert result.exit_code == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and len(failed[0]) > 80
    # y = 1 + 4 + 9 = 14 and dy/dx = 2x = [2, 4, 6]: both failures on the one line
    assert "values.y: expected 15, got 14" in failed[0]
    assert failed[0].endswith("(max |diff| 1; rtol 1e-06, atol 1e-09)")
    assert result.stderr.splitlines()[-1] == "0 passed, 1 failed"


def test_quiet_with_output_is_refused_before_running(tmp_path):
    target = tmp_path / "out.txt"
    result = CliRunner().invoke(cli, ["run", spec(tmp_path), "-q", "--output", str(target)])
    assert result.exit_code == 2
    assert "--quiet prints one line per spec on stderr instead of the tables" in result.stderr
    assert not target.exists() and "FAILED" not in result.stderr


def test_quiet_leaves_json_whole_and_says_so_in_help(tmp_path):
    result = CliRunner().invoke(cli, ["run", spec(tmp_path), "-q", "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["gradients"]["y"]["x"]["overridden"] == [2.0, 4.0, 6.0]
    help_text = " ".join(CliRunner().invoke(cli, ["run", "--help"]).stdout.split())
    assert "Only the table format has a quiet form: json, markdown and csv are always whole" in help_text
