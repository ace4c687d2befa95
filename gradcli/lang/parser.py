"""Parse one expression into the AST: recursive descent with Python's precedence.

The operators and their precedence come from the op table. Today, lowest to
highest: `|`, `&`, comparisons (which do not chain), `+ -`, `* / @`, unary
`- + ~`, `**` (right-associative; -x**2 is -(x**2)), then calls and indexing.
Every operator becomes a Call of its op's name. The nesting depth is checked
while descending, so no input can reach Python's recursion limit.
"""
from __future__ import annotations

from gradcli.errors import SpecError
from gradcli.lang.ast import Call, Const, ExpressionError, IndexExpr, ListExpr, Name, Node, SliceExpr, depth
from gradcli.lang.tokens import Token, tokenize
from gradcli.ops import DTYPES, OPERATORS, OPS, PRECEDENCE, PREFIX_PRECEDENCE, UNARY_OPERATORS

MAX_DEPTH = 48
MAX_ARGS = 256
# The table's infix operators by level, loosest first; those above the prefix operators
# (**) are parsed as powers.
LEVELS = tuple(tuple(t for t, p in PRECEDENCE.items() if p == level)
               for level in sorted(set(PRECEDENCE.values())) if level < PREFIX_PRECEDENCE)
POWERS = tuple(t for t, p in PRECEDENCE.items() if p > PREFIX_PRECEDENCE)
COMPARISONS = tuple(t for t, name in OPERATORS.items() if not OPS[name].chains)
CONSTANT_NAMES = {"True": True, "False": False, "None": None, "none": None}
_PYTHON_WORDS = {
    "and": "use & for 'and'", "or": "use | for 'or'", "not": "use ~ for 'not'",
    "if": "use where(cond, a, b) for a choice", "else": "use where(cond, a, b) for a choice",
    "lambda": "define a function under 'functions' instead", "for": "", "in": "", "is": "",
    "while": "", "def": "", "return": "", "import": "", "yield": "", "await": "", "with": "",
}


def parse_expression(text: str) -> Node:
    """The AST of `text`; raises SpecError (an ExpressionError with the offset) when invalid."""
    if not isinstance(text, str):
        raise SpecError(f"an expression must be a string, got {type(text).__name__}")
    node = _Parser(text).parse()
    level, where = depth(node)
    if level > MAX_DEPTH:
        raise ExpressionError(f"the expression nests {level} levels deep (each operator of a "
                              f"chain such as a + b + c adds one); the limit is {MAX_DEPTH}",
                              where.pos, text, hint="split it into let steps")
    return node


def _describe(tok: Token) -> str:
    """How a token is named in a message."""
    if tok.kind == "end":
        return "the end of the expression"
    if tok.kind == "name":
        return f"name {tok.text!r}"
    if tok.kind == "num":
        return f"number {tok.text}"
    if tok.kind == "str":
        return f"string {tok.text}"
    return repr(tok.text)


class _Parser:
    """One parse of one text; `level` counts the active recursion through unary()."""

    __slots__ = ("text", "tokens", "i", "level")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.level = 0

    # ----- token helpers -----
    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def at(self, *ops: str) -> bool:
        tok = self.tokens[self.i]
        return tok.kind == "op" and tok.text in ops

    def fail(self, message: str, tok: Token, hint: str | None = None) -> ExpressionError:
        return ExpressionError(message, tok.pos, self.text, hint=hint)

    def close(self, closer: str, what: str, opener: Token) -> None:
        """Consume `closer` or explain which bracket is still open."""
        if self.at(closer):
            self.advance()
            return
        tok = self.peek()
        found = "" if tok.kind == "end" else f", found {_describe(tok)}"
        raise self.fail(f"expected {closer!r} to close the {what} opened at column "
                        f"{opener.pos + 1}{found}", tok)

    # ----- grammar, lowest precedence first -----
    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise self.fail("the expression is empty", self.peek())
        node = self.expression()
        tok = self.peek()
        if tok.kind != "end":
            raise self.trailing(tok)
        return node

    def trailing(self, tok: Token) -> ExpressionError:
        """The error for a token that cannot continue a complete expression."""
        if tok.kind == "name" and tok.text in _PYTHON_WORDS:
            return self.python_word(tok)
        if tok.text == "=" and tok.kind == "op":
            return self.fail("'=' is only for keyword arguments", tok, "use == to compare")
        if tok.kind == "op" and tok.text in ")]":
            return self.fail(f"unmatched {tok.text!r}", tok)
        if tok.kind == "op" and tok.text == ":":
            return self.fail("unexpected ':': a slice is only allowed inside an index x[...]", tok)
        if tok.kind == "op" and tok.text == ",":
            return self.fail("unexpected ',': use a list [a, b] for several values", tok)
        if tok.kind == "op" and tok.text in COMPARISONS:
            return self.fail("comparisons do not chain: a < b < c is not allowed", tok,
                             "write (a < b) & (b < c)")
        return self.fail(f"expected an operator or the end of the expression, found "
                         f"{_describe(tok)}", tok, "is an operator missing between two values?")

    def python_word(self, tok: Token) -> ExpressionError:
        hint = _PYTHON_WORDS[tok.text] or None
        return self.fail(f"{tok.text!r} is not part of the expression language", tok, hint)

    def expression(self, level: int = 0) -> Node:
        """One level of infix operators (LEVELS[level]) and everything that binds tighter."""
        if level == len(LEVELS):
            return self.unary()
        texts = LEVELS[level]
        left = self.expression(level + 1)
        while self.at(*texts):
            op = self.advance()
            left = Call(OPERATORS[op.text], (left, self.expression(level + 1)), (), op.pos)
            if op.text in COMPARISONS and self.at(*COMPARISONS):
                raise self.fail("comparisons do not chain: a < b < c is not allowed",
                                self.peek(), "write (a < b) & (b < c)")
        return left

    def unary(self) -> Node:
        # Every cycle of the grammar passes through here, so this one counter
        # bounds the recursion for parentheses, calls, lists, unary chains and **.
        self.level += 1
        try:
            if self.level > MAX_DEPTH:
                raise self.fail(f"the expression nests more than {MAX_DEPTH} levels deep",
                                self.peek(), "split it into let steps")
            if not self.at(*UNARY_OPERATORS):
                return self.power()
            op = self.advance()
            operand = self.unary()
            if (op.text in "-+" and isinstance(operand, Const)
                    and type(operand.value) in (int, float)):
                # A signed number literal stays a constant, so `axis=-1` is an attribute.
                value = -operand.value if op.text == "-" else operand.value
                return Const(value, op.pos)
            return Call(UNARY_OPERATORS[op.text], (operand,), (), op.pos)
        finally:
            self.level -= 1

    def power(self) -> Node:
        base = self.postfix()
        if self.at(*POWERS):
            op = self.advance()
            return Call(OPERATORS[op.text], (base, self.unary()), (), op.pos)
        return base

    def postfix(self) -> Node:
        first = self.peek()
        node = self.atom()
        callable_name = first.kind == "name" and isinstance(node, Name)
        while self.at("(", "["):
            if self.at("("):
                if not callable_name:
                    raise self.not_callable(node, first)
                node = self.call(node)
            else:
                node = self.index(node)
            callable_name = False
        return node

    def not_callable(self, node: Node, first: Token) -> ExpressionError:
        if isinstance(node, Const) and isinstance(node.value, str) and first.text in DTYPES:
            return self.fail(f"{first.text!r} is a dtype, not a function", first,
                             f"use cast(x, {first.text})")
        return self.fail("only an op or function name can be called", self.peek())

    def call(self, name: Name) -> Call:
        opener = self.advance()
        args: list[Node] = []
        kwargs: list[tuple[str, Node]] = []
        while not self.at(")"):
            tok = self.peek()
            if tok.kind == "name" and self.peek(1).kind == "op" and self.peek(1).text == "=":
                self.i += 2
                if any(key == tok.text for key, _ in kwargs):
                    raise self.fail(f"keyword argument {tok.text!r} is given twice", tok)
                kwargs.append((tok.text, self.expression()))
            else:
                if kwargs:
                    raise self.fail("a positional argument cannot follow a keyword argument", tok)
                args.append(self.expression())
            if len(args) + len(kwargs) > MAX_ARGS:
                raise self.fail(f"{name.id}() is given more than {MAX_ARGS} arguments", tok)
            if not self.at(","):
                break
            self.advance()
        self.close(")", "call", opener)
        return Call(name.id, tuple(args), tuple(kwargs), name.pos)

    def index(self, target: Node) -> Call:
        opener = self.advance()
        if self.at("]"):
            raise self.fail("empty index: write x[0], x[1:3] or x[:, 0]", self.peek())
        items = []
        while True:
            items.append(self.index_item())
            if not self.at(","):
                break
            self.advance()
            if self.at("]"):
                break
        self.close("]", "index", opener)
        index = IndexExpr(tuple(items), opener.pos)
        return Call("getitem", (target,), (("index", index),), opener.pos)

    def index_item(self) -> Node:
        start_pos = self.peek().pos
        start = None if self.at(":") else self.expression()
        if not self.at(":"):
            return start
        self.advance()
        stop = None if self.at(":", ",", "]") else self.expression()
        step = None
        if self.at(":"):
            self.advance()
            step = None if self.at(",", "]") else self.expression()
        return SliceExpr(start, stop, step, start_pos)

    def atom(self) -> Node:
        tok = self.peek()
        if tok.kind in ("num", "str"):
            self.advance()
            return Const(tok.value, tok.pos)
        if tok.kind == "name":
            self.advance()
            if tok.text in _PYTHON_WORDS:
                raise self.python_word(tok)
            if tok.text in CONSTANT_NAMES:
                return Const(CONSTANT_NAMES[tok.text], tok.pos)
            if tok.text in DTYPES:
                return Const(tok.text, tok.pos)
            return Name(tok.text, tok.pos)
        if self.at("("):
            self.advance()
            if self.at(")"):
                raise self.fail("empty parentheses: expected a value inside", self.peek())
            inner = self.expression()
            if self.at(","):
                raise self.fail("tuples are not part of the expression language", self.peek(),
                                "use a list [a, b]")
            self.close(")", "'('", tok)
            return inner
        if self.at("["):
            return self.list_literal()
        if tok.kind == "end":
            raise self.fail("the expression ended early: expected a value", tok)
        if tok.text == ":":
            raise self.fail("unexpected ':': a slice is only allowed inside an index x[...]", tok)
        raise self.fail(f"expected a value, found {_describe(tok)}", tok)

    def list_literal(self) -> ListExpr:
        opener = self.advance()
        items = []
        while not self.at("]"):
            items.append(self.expression())
            if not self.at(","):
                break
            self.advance()
        if self.at(":"):
            raise self.fail("unexpected ':': a slice is only allowed inside an index x[...]",
                            self.peek())
        self.close("]", "list", opener)
        return ListExpr(tuple(items), opener.pos)
