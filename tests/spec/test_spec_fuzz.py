"""Property tests: whatever the input, the parser and loader raise SpecError and nothing else."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_samples import BASE, SPEC_V1_EXAMPLE, sx

from gradcli.errors import SpecError
from gradcli.lang import Call, Const, Name, parse_expression
from gradcli.ops import OPERATORS, UNARY_OPERATORS
from gradcli.spec import load_spec_text

# GRADCLI_FUZZ_EXAMPLES=5000 runs a longer campaign; the default keeps the suite quick.
FUZZ = settings(max_examples=int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "150")), deadline=None,
                database=None, suppress_health_check=[HealthCheck.too_slow])
# A directory that does not exist: `load:` paths in mutated specs resolve against it, find nothing.
SPEC_DIR = Path(tempfile.gettempdir()) / "gradcli-spec-fuzz-no-such-dir"

EXPRESSIONS = [
    "sum(s * w)", "-x**2 + 3", "where(abs(x) <= 1, dy, 0)", "x[:, 1:3]", "a | b & c",
    "cast(x > 0, dtype(x))", "sum(x, axis=-1, keepdims=True)", "concat([a, b], axis=0)",
    "reverse_gradient(x, scale=0.5) @ w", "x[0, ::2, None] ** .5e1", "clip(x, -1, 1) != 'a'",
]
SPEC_ALPHABET = st.sampled_from(list("()[]{},:=+-*/@<>&|~.!'\"#&*!%?|>\n\t -0123456789.eE_xyzw")
                                + ["\x00", "\ud800", "é", "\u2028", "---", "- ", ": ", "!!",
                                   "&a ", "*a", "<<: ", "load: ../a.npz", "[[[[", "1e999"])


def mutate(text: str, data) -> str:
    """Insert, delete or replace a few characters or lines of `text`."""
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["insert", "delete", "replace", "line"]))
        i = data.draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:i] + data.draw(SPEC_ALPHABET) + text[i:]
        elif kind == "delete":
            text = text[:i] + text[i + data.draw(st.integers(1, 8)):]
        elif kind == "replace":
            text = text[:i] + data.draw(SPEC_ALPHABET) + text[i + 1:]
        else:
            lines = text.split("\n")
            j = data.draw(st.integers(0, len(lines) - 1))
            action = data.draw(st.sampled_from(["drop", "double", "swap"]))
            if action == "drop":
                del lines[j]
            elif action == "double":
                lines.insert(j, lines[j])
            elif j + 1 < len(lines):
                lines[j], lines[j + 1] = lines[j + 1], lines[j]
            text = "\n".join(lines)
    return text


def only_spec_errors(call) -> None:
    try:
        call()
    except SpecError as exc:
        rendered = str(exc)                     # rendering never fails either
        assert rendered
        assert exc.line is None or exc.line >= 1
        assert exc.column is None or exc.column >= 1


@FUZZ
@given(st.text(max_size=200))
def test_random_text_to_the_parser(text):
    only_spec_errors(lambda: parse_expression(text))


@FUZZ
@given(st.data())
def test_mutated_expressions_to_the_parser(data):
    text = mutate(data.draw(st.sampled_from(EXPRESSIONS)), data)
    only_spec_errors(lambda: parse_expression(text))


@FUZZ
@given(st.text(max_size=300))
def test_random_text_to_the_loader(text):
    only_spec_errors(lambda: load_spec_text(text, path=str(SPEC_DIR / "spec.yaml")))


@FUZZ
@given(st.data())
def test_mutated_specs_to_the_loader(data):
    text = mutate(data.draw(st.sampled_from([BASE, SPEC_V1_EXAMPLE])), data)
    only_spec_errors(lambda: load_spec_text(text, path=str(SPEC_DIR / "spec.yaml")))


@FUZZ
@given(st.lists(st.tuples(
    st.sampled_from(["inputs.x", "inputs.w.shape", "let.s", "outputs.y", "override_map.sign",
                     "override_map", "train.steps", "train", "wrt", "expect.values.y", "seed",
                     "inputs.x.0", "let", "", "a..b", "functions.f.args"]),
    st.text(max_size=30) | st.sampled_from(["[1,2,3]", "{uniform: [0, 1]}", "sign(x", "-1",
                                            "identity", "[x]", "null", "~", "{a: *b}"])),
    max_size=3))
def test_random_overrides(pairs):
    overrides = [f"{key}={value}" for key, value in pairs]
    only_spec_errors(lambda: load_spec_text(BASE, path=str(SPEC_DIR / "spec.yaml"),
                                            overrides=overrides))


# ----- round trip: a generated tree, printed with full parentheses, parses back to itself -----
BINARY = sorted(set(OPERATORS) - {"**"})
LEAVES = st.one_of(
    st.sampled_from(["x", "y", "w1", "_b"]).map(lambda n: Name(n, 0)),
    st.integers(0, 10**6).map(lambda v: Const(v, 0)),
    st.floats(0, 1e6, allow_nan=False).map(lambda v: Const(v, 0)),
)


def _tree(children):
    binary = st.tuples(st.sampled_from(BINARY + ["**"]), children, children).map(
        lambda t: ("bin",) + t)
    unary = st.tuples(st.sampled_from(["-", "~"]), children).map(lambda t: ("un",) + t)
    call = st.tuples(st.sampled_from(["sum", "f", "where"]),
                     st.lists(children, max_size=3)).map(lambda t: ("call",) + t)
    return binary | unary | call


def render(tree) -> str:
    if isinstance(tree, Name):
        return tree.id
    if isinstance(tree, Const):
        return repr(tree.value)
    if tree[0] == "bin":
        return f"({render(tree[2])} {tree[1]} {render(tree[3])})"
    if tree[0] == "un":
        return f"({tree[1]}{render(tree[2])})"
    return f"{tree[1]}({', '.join(render(a) for a in tree[2])})"


def expected(tree):
    """The tree the parser should build, as a leaf node or an s-expression string."""
    if isinstance(tree, (Name, Const)):
        return tree
    if tree[0] == "bin":
        return f"({OPERATORS[tree[1]]} {sx_of(expected(tree[2]))} {sx_of(expected(tree[3]))})"
    if tree[0] == "un":
        operand = expected(tree[2])
        if tree[1] == "-" and isinstance(operand, Const):
            return Const(-operand.value, 0)      # a signed literal folds to a constant
        return f"({UNARY_OPERATORS[tree[1]]} {sx_of(operand)})"
    return "(" + " ".join([tree[1], *(sx_of(expected(a)) for a in tree[2])]) + ")"


def sx_of(item) -> str:
    return item if isinstance(item, str) else sx(item)


@FUZZ
@given(st.recursive(LEAVES, _tree, max_leaves=12))
def test_printed_trees_parse_back(tree):
    text = render(tree)
    assert sx(parse_expression(text)) == sx_of(expected(tree))


def test_calls_are_calls():
    assert isinstance(parse_expression("f(x)"), Call)
