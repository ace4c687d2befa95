"""Where a sub-expression sits in the spec: its text and `file:line:col`, found from its nodes.

AST nodes keep only the offset of their first character (for an operator, the
operator's), so a sub-expression's extent is rebuilt from the tokens its nodes
start at, widened until its brackets balance. Computed only when asked: a
Place is made for every op the interpreter builds, its text rarely.
"""
from __future__ import annotations

from gradcli.errors import SpecError
from gradcli.lang.ast import walk
from gradcli.lang.tokens import tokenize

OPENERS, CLOSERS = ("(", "["), (")", "]")


def span(text: str, node) -> tuple[int, int]:
    """(start, end) offsets of node's source in text, brackets included."""
    tokens = [t for t in tokenize(text) if t.kind != "end"]
    index = {t.pos: i for i, t in enumerate(tokens)}
    starts = [index[n.pos] for n in walk(node) if n.pos in index]
    if not starts:
        return 0, len(text)
    first, last = min(starts), max(starts)
    # a negative number literal starts at its sign: no sub-expression ends with one
    while tokens[last].kind == "op" and tokens[last].text in ("-", "+") and last < len(tokens) - 1:
        last += 1
    while True:
        depth, closer_unmatched = 0, False
        for tok in tokens[first:last + 1]:
            if tok.kind == "op" and tok.text in OPENERS:
                depth += 1
            elif tok.kind == "op" and tok.text in CLOSERS:
                if depth == 0:
                    closer_unmatched = True
                    break
                depth -= 1
        if closer_unmatched and first > 0:
            first -= 1
        elif depth > 0 and last < len(tokens) - 1:
            last += 1
        else:
            break
    end = tokens[last].pos + len(tokens[last].text)
    return tokens[first].pos, end


class Place:
    """One sub-expression of one spec expression: what an op built from it remembers."""

    __slots__ = ("expr", "node")

    def __init__(self, expr, node) -> None:
        self.expr, self.node = expr, node

    @property
    def text(self) -> str:
        start, end = span(self.expr.text, self.node)
        return " ".join(self.expr.text[start:end].split())

    @property
    def column(self) -> int:
        return self.expr.loc.column + span(self.expr.text, self.node)[0]

    @property
    def location(self) -> str:
        loc = self.expr.loc
        return f"{loc.path}:{loc.line}:{self.column}" if loc.line else f"{loc.path} {self.text}"

    def error(self, message: str) -> SpecError:
        """A SpecError with a caret under this sub-expression's operator or name."""
        loc = self.expr.loc
        column = loc.column + (self.node.pos if self.expr.text else 0)
        if loc.line == 0:  # a --set value: its flag and key, and where in it (there is no line)
            return SpecError(message + loc.in_value(column), key=loc.path)
        return SpecError(message, path=loc.path, line=loc.line, column=column,
                         source_line=loc.source_line)

    def __repr__(self) -> str:
        return f"<Place {self.text!r} at {self.location}>"
