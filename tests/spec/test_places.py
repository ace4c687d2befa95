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
