"""Random mutations of the bundled specs never reach the user as a traceback."""
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli.cli import cli

SPECS = [p.read_text() for p in sorted((Path(__file__).parents[2] / "experiments").glob("*.yaml"))]
SNIPPETS = ["(", ")", "[", "]", ":", ",", "-", "*", "**", "x", "dy", "none", "1e309", "0", "\n",
            "  ", "{", "}", "sum(", "where(", "@", "~", "'", '"', "- ", "!!python/object:os.system"]


@st.composite
def mutated_spec(draw):
    text = draw(st.sampled_from(SPECS))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        snippet = draw(st.sampled_from(SNIPPETS))
        if kind == "insert":
            text = text[:pos] + snippet + text[pos:]
        elif kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 8)):]
        else:
            text = text[:pos] + snippet + text[pos + len(snippet):]
    return text


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutated_spec())
def test_mutated_specs_give_a_clean_exit(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["run", "--no-numeric", "--format", "json", str(path)])
    output = result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), output
    assert "Traceback" not in output and "internal error" not in output, output
    if result.exit_code == 2:
        assert "error:" in result.stderr
