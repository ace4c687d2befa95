"""Hostile or odd spec text gets a clear, placed user error (never "internal error"), and
spec text never reaches markdown output as raw HTML."""
import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.errors import SpecError
from gradcli.spec import load_spec, load_spec_text


def refused(text: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec_text(text, path="s.yaml")
    return info.value


def test_a_csv_cell_past_csvs_field_limit_is_a_placed_error(tmp_path):
    (tmp_path / "d.csv").write_text("a,y\n" + "1" * 131_073 + ",2\n")
    path = tmp_path / "s.yaml"
    path.write_text("data: {load: d.csv, features: X, labels: y}\ninputs:\n  w: [1.0]\n"
                    "outputs:\n  o: sum(X * w)\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert (info.value.line, info.value.column) == (1, 14)
    assert info.value.bare_message == ("line 2: a cell is longer than 131,072 characters, the "
                                       "limit for one csv cell")


@pytest.mark.parametrize("where", ["inputs:\n  x: {load: \"a\\x00.npz\"}\n",
                                   "data: {load: \"d\\x00.csv\", features: X, labels: y}\n"
                                   "inputs:\n  x: [1.0]\n"])
def test_a_nul_in_a_load_path_is_a_placed_error(where):
    err = refused(where + "outputs:\n  o: sum(x)\n")
    assert err.line is not None and "holds a NUL character; no file has such a name" \
        in err.bare_message


@pytest.mark.parametrize("value, said", [(".nan", ".nan"), (".inf", ".inf"), ("-.inf", "-.inf")])
def test_nan_and_inf_where_a_finite_number_is_needed_say_what_they_are(value, said):
    err = refused("inputs: {x: [1.0]}\noutputs: {y: sum(x)}\n"
                  f"train: {{optimizer: {{name: sgd, lr: {value}}}}}\n")
    assert err.bare_message == f"expected a finite number, got {said}"
    err = refused(f"seed: {value}\ninputs: {{x: [1.0]}}\noutputs: {{y: sum(x)}}\n")
    assert err.bare_message == f"expected an integer, got {said} (not a finite number)"


def test_markdown_escapes_html_and_links_in_spec_text(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text('name: "[x](javascript:alert(1)) <b>"\n'
                    'description: "</style><script>alert(1)</script> a & b"\n'
                    "inputs:\n  x: [1.0]\noutputs:\n  y: sum(x)\n")
    result = CliRunner().invoke(cli, ["run", str(path), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "<" not in result.output
    lines = result.output.splitlines()
    assert lines[0] == r"## \[x](javascript:alert(1)) &lt;b>"
    assert lines[2] == "&lt;/style>&lt;script>alert(1)&lt;/script> a &amp; b"
