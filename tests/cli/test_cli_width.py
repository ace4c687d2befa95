"""Tables sent to a pipe or a file are not cut to the 80 columns rich assumes off a terminal."""
from __future__ import annotations

from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """\
name: {name}
inputs:
  x: [0.123456789, -0.987654321, 3.14159265]
outputs:
  a_rather_long_output_name: sum(x * x * {k})
"""


def test_compare_piped_keeps_every_digit_and_header(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    paths = []
    for k in (1, 2):
        path = tmp_path / f"s{k}.yaml"
        path.write_text(SPEC.format(name=f"a-spec-with-a-long-descriptive-name-number-{k}", k=k))
        paths.append(str(path))
    result = CliRunner().invoke(cli, ["compare", *paths, "--tolerance", "1e-6"])
    assert result.exit_code == 1, result.output  # 2x vs 4x: outside the tolerance
    assert "…" not in result.output
    assert "a_rather_long_output_name/x" in result.output
    assert "a-spec-with-a-long-descriptive-name-number-2" in result.output
    assert "-3.95062" in result.output and "12.5664" in result.output  # 4 * x, 2nd and 3rd


def test_run_to_a_file_keeps_headers_whole(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(name="n", k=1))
    out = tmp_path / "out.txt"
    result = CliRunner().invoke(cli, ["run", str(spec), "--output", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "…" not in text and "output/input" in text


def test_columns_still_decides_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(name="n", k=1))
    result = CliRunner().invoke(cli, ["run", str(spec)])
    assert max(len(line) for line in result.output.splitlines()) <= 60
