"""Sub-expression spans: the text and column a provenance record or an error names."""
import pytest

from gradcli.lang.ast import walk
from gradcli.lang.parser import parse_expression
from gradcli.lang.places import span


def _text_of(text, func):
    node = next(n for n in walk(parse_expression(text)) if getattr(n, "func", None) == func)
    start, end = span(text, node)
    return text[start:end]


@pytest.mark.parametrize("text, func, expected", [
    ("sum(where(x > 0, log(x), 0))", "log", "log(x)"),
    ("sum(where(x > 0, log(x), 0))", "greater", "x > 0"),
    ("(a + b) * c", "mul", "(a + b) * c"),
    ("(a + b) * c", "add", "a + b"),
    ("-x[1:3] ** 2", "getitem", "x[1:3]"),
    ("sum(x, axis=0) / n", "sum", "sum(x, axis=0)"),
    ("f([x, y])", "f", "f([x, y])"),
])
def test_span_covers_the_whole_sub_expression(text, func, expected):
    assert _text_of(text, func) == expected


@pytest.mark.parametrize("text, expected", [
    ("where(c, j, -3.0)", "-3.0"), ("clip(x, -1, +2)", "-1"), ("stack([k, -4])", "-4"),
])
def test_a_negative_number_literal_spans_its_sign_and_its_digits(text, expected):
    # a negative literal's node starts at its sign: its text was "-" alone
    node = next(n for n in walk(parse_expression(text)) if getattr(n, "value", None) == float(
        expected))
    start, end = span(text, node)
    assert text[start:end] == expected
    assert _text_of(text, parse_expression(text).func) == text
