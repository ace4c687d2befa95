"""Spec text reaches people as text: no terminal escape sequences, no rich markup."""
import json

import pytest
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
# YAML's own escapes: \e is ESC, \a is BEL. A window title, a screen wipe, an OSC-8 link.
EVIL = ('name: "evil\\e]0;TITLE\\a"\n'
        'description: "wipe\\e[2J, \\e]8;;http://x.example\\e\\\\link\\e]8;;\\e\\\\ [bold]b[/bold]"\n'
        "inputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n")


def invoke(*args):
    return CliRunner().invoke(cli, list(args), env=ENV)


@pytest.fixture
def evil(tmp_path):
    def make(extra="", name="evil.yaml"):
        path = tmp_path / name
        path.write_text(EVIL + extra)
        return str(path)
    return make


def assert_clean(text):
    assert "\x1b" not in text and "\x07" not in text, repr(text)


def test_printable_escapes_controls_and_keeps_the_rest():
    from gradcli.printable import printable

    assert printable("a\x1b[2Jb\x07\x9b\u202e\n\tµ→") == "a\\x1b[2Jb\\x07\\x9b\\u202e\\n\\tµ→"


def test_tables_show_name_and_description_escaped(evil):
    result = invoke("run", evil())
    assert result.exit_code == 0, result.stderr
    assert_clean(result.stdout + result.stderr)
    assert "evil\\x1b]0;TITLE\\x07" in result.stdout
    assert "wipe\\x1b[2J" in result.stdout
    assert "[bold]b[/bold]" in result.stdout  # shown as typed, not read as markup


def test_quiet_check_and_expect_failures_are_escaped(evil):
    spec = evil("expect:\n  values: {y: 7.0}\n")
    quiet = invoke("run", "-q", spec)
    assert quiet.exit_code == 1
    assert_clean(quiet.stdout + quiet.stderr)
    assert "FAILED evil\\x1b]0;TITLE\\x07" in quiet.stderr
    check = invoke("check", spec)
    assert check.exit_code == 0
    assert_clean(check.stdout + check.stderr)
    assert "(evil\\x1b]0;TITLE\\x07)" in check.stdout


@pytest.mark.parametrize("fmt", ["markdown", "csv"])
def test_markdown_and_csv_are_escaped(evil, fmt):
    result = invoke("run", evil(), "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert_clean(result.stdout)
    assert "evil\\x1b]0;TITLE\\x07" in result.stdout


def test_json_escapes_control_characters_by_json_rules(evil):
    result = invoke("run", evil(), "--format", "json")
    assert_clean(result.stdout)
    assert json.loads(result.stdout)["name"] == "evil\x1b]0;TITLE\x07"  # the exact name, decoded


def test_compare_labels_are_escaped(evil):
    result = invoke("compare", evil(name="a.yaml"), evil(name="b.yaml"), "--tolerance", "0")
    assert result.exit_code == 0, result.stderr
    assert_clean(result.stdout)
    assert "evil\\x1b]0;TITLE\\x07" in result.stdout


@pytest.mark.parametrize("text, shown", [
    ("inputs:\n  x: 1.0\noutputs:\n  y: x\n\"\\e[2Jz\": 1\n", "\\x1b[2Jz: unknown key"),
    ("inputs:\n  x: 1.0\noutputs:\n  y: x  # \x1b]0;T\x07\n", "'\\x1b' is not allowed"),
    ("inputs:\n  \"x\\e[2J\": 1.0\noutputs:\n  y: x\n", "x\\x1b[2J"),
])
def test_error_messages_quote_spec_text_escaped(tmp_path, text, shown):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = invoke("run", str(path))
    assert result.exit_code == 2
    assert_clean(result.stderr)
    assert shown in result.stderr


def test_list_ops_keeps_text_in_brackets():
    result = invoke("list", "ops")
    assert result.exit_code == 0
    assert "clip to [lo, hi] (tf.clip_by_value)" in result.stdout
    grads = invoke("list", "gradients")
    assert "straight-through inside [-1, 1]" in grads.stdout
