"""Gradient rules written in the language: the names such a rule sees, and the built-in ones.

A rule written as an expression (a spec's `register:` gradient, a built-in named gradient)
is evaluated for one op with the names `rule_names` binds: x, x0, x1.. (the op's inputs),
y, y0.. (its outputs), dy, dy0.. (their upstream gradients) and the op's attributes; a
function's gradient sees its args and `upstream_names`. Every backend binds them here, so
the names mean the same everywhere.

The built-in named gradients' text lives in the op table's package (gradcli/ops BUILTINS);
`builtin` parses it once into an expression the interpreter evaluates, as it evaluates a
spec's. Knows nothing of the core or of a backend (gradcli/builtins.py wires the core).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from gradcli.ops import BUILTINS
from gradcli.record import record


@record
class Source:
    """Where a built-in's text comes from, shaped as a spec Location for error messages."""

    path: str
    line: int
    column: int
    source_line: str


@record
class BuiltinExpr:
    """A built-in gradient parsed: shaped as a spec's Expr (text, node, loc)."""

    text: str
    node: object
    loc: Source


_PARSED: dict[str, BuiltinExpr] = {}


def builtin(name: str) -> BuiltinExpr | None:
    """The built-in named gradient `name` (any case) as an expression: the gradient of the op's
    first input; None when no built-in has that name."""
    key = name.lower()
    parsed = _PARSED.get(key)
    if parsed is None and key in BUILTINS:
        from gradcli.lang.parser import parse_expression  # parsed when first used, not at import

        text = BUILTINS[key][0]
        parsed = _PARSED[key] = BuiltinExpr(
            text, parse_expression(text), Source(f"<built-in gradient {key!r}>", 1, 1, text))
    return parsed


def upstream_names(dys: Sequence) -> dict:
    """dy, dy0, dy1..: the upstream gradients, as a rule and a function's gradient see them."""
    return {"dy": dys[0], **{f"dy{i}": d for i, d in enumerate(dys)}}


def rule_names(attrs: Mapping, inputs: Sequence, outputs: Sequence, dys: Sequence) -> dict:
    """What a gradient rule written in the language sees for one op: its attributes, x, x0..
    (inputs), y, y0.. (outputs) and dy, dy0.. (upstream gradients)."""
    names = dict(attrs)
    names.update({f"x{i}": t for i, t in enumerate(inputs)}, x=inputs[0], y=outputs[0])
    names.update({f"y{i}": t for i, t in enumerate(outputs)})
    names.update(upstream_names(dys))
    return names
