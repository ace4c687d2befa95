"""Parse expressions where they sit in the YAML and point errors at the exact character.

An offset into the expression is mapped back to the file by walking the
scalar's source text alongside its value, which also works for quoted, folded
and block scalars spanning several lines.
"""
from __future__ import annotations

from gradcli.errors import SpecError
from gradcli.lang.ast import ExpressionError
from gradcli.lang.checks import Checker, Scope
from gradcli.lang.parser import parse_expression
from gradcli.record import record
from gradcli.spec.document import FLOW_COMMA_HINT, Map, Scalar, Seq, YNode
from gradcli.spec.fields import describe, fail
from gradcli.spec.model import Expr, Location


@record
class Site:
    """A parsed expression and the YAML scalar it came from."""

    expr: Expr
    node: Scalar
    key: str


def parse_at(node: YNode | None, key: str) -> Site:
    """Parse the expression in `node`; a syntax error points into the file."""
    if not isinstance(node, Scalar) or node.kind == "null":
        hint = ("YAML reads [...] and {...} as its own lists and mappings: quote the expression"
                if isinstance(node, (Seq, Map)) else None)
        raise fail(node, key, f"expected an expression, got {describe(node)}", hint)
    try:
        tree = parse_expression(node.text)
    except ExpressionError as exc:
        raise error_at(node, exc.pos, key, exc.bare_message, exc.hint or _flow_hint(node)) \
            from None
    return Site(Expr(node.text, tree, offset_location(node, 0)), node, key)


def _flow_hint(node: Scalar) -> str | None:
    """A plain scalar cut short by a comma: YAML flow syntax split the expression."""
    rest = node.mark.source.text[node.end:node.end + 40].lstrip(" ")
    if node.style is None and rest[:1] in (",", "}", "]"):
        return FLOW_COMMA_HINT
    return None


def check_at(site: Site, scope: Scope, unpack: int = 1) -> None:
    """Check a parsed expression against its scope; errors point into the file."""
    try:
        Checker(scope, site.expr.text).check(site.expr.node, unpack)
    except ExpressionError as exc:
        raise error_at(site.node, exc.pos, site.key, exc.bare_message, exc.hint) from None


def error_at(node: Scalar, pos: int, key: str, message: str, hint: str | None) -> SpecError:
    """A SpecError at character `pos` of the expression in `node`."""
    loc = offset_location(node, pos)
    if loc.line == 0:
        message += loc.in_value()  # --set has no file position: where in the value, then
    return loc.error(message, key=key, hint=hint)


def offset_location(node: Scalar, offset: int) -> Location:
    """The file location of character `offset` of the scalar's value."""
    mark = node.mark
    text = mark.source.text
    raw = text[mark.index:node.end]
    j = 1 if node.style in ("'", '"') else 0
    if node.style in ("|", ">"):
        j = raw.find("\n") + 1  # skip the block header line, whose indicators could match
    index = None
    for i, ch in enumerate(node.text[:offset + 1]):
        k = _find(raw, ch, j)
        if k < 0:
            return mark.location()  # escapes we cannot follow: point at the scalar instead
        if i == offset:
            index = k
            break
        j = k + 1
    absolute = mark.index + (index if index is not None else j)
    if mark.source.from_set:
        return Location(mark.location().path, 0, absolute + 1, text)
    newlines = text.count("\n", mark.index, absolute)
    if newlines == 0:
        column = mark.column + (absolute - mark.index)
    else:
        column = absolute - text.rfind("\n", 0, absolute)
    start = text.rfind("\n", 0, absolute) + 1
    end = text.find("\n", absolute)
    line_text = text[start:end if end >= 0 else len(text)].rstrip("\r")
    return Location(mark.source.path, mark.line + newlines, column, line_text)


def _find(raw: str, ch: str, start: int) -> int:
    """The next occurrence of `ch` in raw from `start`; any whitespace matches whitespace."""
    if not ch.isspace():
        return raw.find(ch, start)
    for k in range(start, len(raw)):
        if raw[k].isspace():
            return k
    return -1
