"""Split an expression into tokens: numbers, names, strings and operators."""
from __future__ import annotations

import re

from gradcli.lang.ast import ExpressionError
from gradcli.ops import OPERATORS, UNARY_OPERATORS
from gradcli.record import record

MAX_LENGTH = 4000

# The op table's operators and the brackets and separators, longest first, so '**' wins over
# '*' and '<=' over '<'.
PUNCTUATION = ("(", ")", "[", "]", ",", ":", "=")
OPERATOR_TEXTS = tuple(sorted({*OPERATORS, *UNARY_OPERATORS, *PUNCTUATION}, key=lambda t: (-len(t), t)))

NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIGITS = frozenset("0123456789")
_SPACE = re.compile(r"[ \t\r\n]+")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}

# Characters people reach for from Python or other languages, and what to say instead.
_UNSUPPORTED = {
    "//": "'//' (floor division) is not part of the expression language; use floor(a / b)",
    "%": "'%' is not part of the expression language",
    "^": "'^' is not an operator here; use ** for powers and | or & on booleans",
    "!": "unexpected '!'; use ~ for logical not and != to compare",
    "{": "unexpected '{': there are no dict or set literals in the expression language",
    "}": "unexpected '}'",
    ";": "unexpected ';': an expression is a single expression",
    "#": "unexpected '#': comments belong in the YAML, outside the expression",
    "`": "unexpected '`'",
    "$": "unexpected '$'",
    "?": "unexpected '?': use where(cond, a, b) for a choice",
    "\\": "unexpected '\\'",
}


@record
class Token:
    """One token: its kind (num, name, str, op or end), text, offset and value."""

    kind: str
    text: str
    pos: int
    value: object = None


def tokenize(text: str) -> list[Token]:
    """The tokens of `text`, ending with an 'end' token; raises ExpressionError."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is {len(text)} characters long; the limit is "
                              f"{MAX_LENGTH}", 0, text[:80])
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        space = _SPACE.match(text, i)
        if space:
            i = space.end()
            continue
        if ch in _DIGITS or (ch == "." and i + 1 < n and text[i + 1] in _DIGITS):
            tokens.append(_number(text, i))
            i += len(tokens[-1].text)
        elif ch.isalpha() or ch == "_":  # non-ASCII letters get a clear error below
            match = _NAME.match(text, i)
            if match is None:
                raise ExpressionError(f"unexpected character {ch!r}: names use ASCII letters, "
                                      "digits and '_'", i, text)
            tokens.append(Token("name", match.group(), i))
            i = match.end()
        elif ch in "'\"":
            tokens.append(_string(text, i))
            i += len(tokens[-1].text)
        else:
            tokens.append(_operator(text, i))
            i += len(tokens[-1].text)
    tokens.append(Token("end", "", n))
    return tokens


def _number(text: str, i: int) -> Token:
    """The number starting at `i`, as an int or a float that does not overflow."""
    match = NUMBER.match(text, i)
    literal = match.group()
    end = match.end()
    if end < len(text) and (text[end].isalnum() or text[end] in "_."):
        tail = re.match(r"[A-Za-z0-9_.]*", text[end:]).group()
        raise ExpressionError(f"invalid number {literal + tail!r}", i, text,
                              hint="numbers look like 3, -0.5, .5 or 1e-3")
    if "." in literal or "e" in literal or "E" in literal:
        value: object = float(literal)
        if value in (float("inf"), float("-inf")):
            raise ExpressionError(f"the number {literal} is too large for a float", i, text)
    else:
        value = int(literal)
        try:
            float(value)
        except OverflowError:
            raise ExpressionError(f"the number {literal[:20]}... is too large for a float",
                                  i, text) from None
    return Token("num", literal, i, value)


def _string(text: str, i: int) -> Token:
    """The quoted string starting at `i`, with \\\\, \\', \\\", \\n and \\t unescaped."""
    quote, j, out = text[i], i + 1, []
    while j < len(text):
        ch = text[j]
        if ch == quote:
            return Token("str", text[i:j + 1], i, "".join(out))
        if ch == "\\" and j + 1 < len(text):
            out.append(_ESCAPES.get(text[j + 1], "\\" + text[j + 1]))
            j += 2
            continue
        out.append(ch)
        j += 1
    raise ExpressionError(f"unterminated string: the {quote} opened here is never closed", i, text)


def _operator(text: str, i: int) -> Token:
    """The operator or bracket at `i`; anything else is a clear error."""
    if text.startswith("//", i):
        raise ExpressionError(_UNSUPPORTED["//"], i, text)
    for op in OPERATOR_TEXTS:
        if text.startswith(op, i):
            return Token("op", op, i)
    ch = text[i]
    if ch == ".":
        raise ExpressionError("unexpected '.': attribute access is not part of the expression "
                              "language", i, text, hint="call an op instead, e.g. transpose(x)")
    if ch in _UNSUPPORTED:
        raise ExpressionError(_UNSUPPORTED[ch], i, text)
    raise ExpressionError(f"unexpected character {ch!r}", i, text)
