"""An expression written inside YAML's {...} is cut by its commas: the README writes such
mappings in block style, and the error for a cut one says to quote it, even when the cut
pieces first show up as a repeated key."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
HINT = "inside YAML's {...} or [...] a comma ends the value: quote the expression"


def _readme_block(marker: str) -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return next(b for b in blocks if marker in b)


def test_the_readme_binaryconnect_snippet_reads_as_the_experiment_file():
    # PyYAML, not gradcli's reader, is the oracle for what the YAML means
    snippet = yaml.safe_load(_readme_block("# the straight-through estimator under test"))
    experiment = yaml.safe_load((ROOT / "experiments" / "binaryconnect_digits.yaml").read_text())
    assert snippet["train"]["constraints"] == experiment["train"]["constraints"] == {
        "W1": "clip(W1, -1, 1)", "W2": "clip(W2, -1, 1)"}
    for key in ("data", "override_map", "let", "outputs"):
        assert snippet[key] == experiment[key], key


def test_a_repeated_key_made_by_cut_expressions_says_to_quote_them(spec_error):
    error = spec_error("""\
        inputs:
          W1: [0.5]
          W2: [2.0]
        outputs:
          y: sum(W1 * W2)
        train:
          loss: y
          optimizer: {name: sgd, lr: 0.1}
          constraints: {W1: clip(W1, -1, 1), W2: clip(W2, -1, 1)}
        """)
    assert str(error).startswith("spec.yaml:9:51: duplicate key '-1'")
    assert HINT in str(error) and error.exit_code == 2


def test_a_true_repeated_key_in_braces_has_no_quoting_hint(spec_error):
    error = spec_error("""\
        inputs: {x: [1.0], x: [2.0]}
        outputs:
          y: sum(x)
        """)
    assert str(error).startswith("spec.yaml:1:20: duplicate key 'x'")
    assert HINT not in str(error)


def test_a_let_cut_at_its_keyword_argument_says_to_quote_it(spec_error):
    error = spec_error("""\
        inputs:
          x: [[1.0, 5.0]]
        let: {"v, i": max_with_argmax(x, axis=1)}
        outputs:
          y: sum(v)
        """)
    assert str(error).startswith("spec.yaml:3:34: let.axis=1): 'axis=1)' is not a valid name")
    assert HINT in str(error)
