"""The expression AST, the error that points into an expression, and a walker.

Every node records `pos`, the 0-based character offset of its first character
in the expression text, so later checks can point at the exact spot.
"""
from __future__ import annotations

from typing import Iterator, Union

from gradcli.errors import SpecError
from gradcli.record import record


@record
class Const:
    """A literal: number, bool, None, string or dtype name."""

    value: object
    pos: int


@record
class Name:
    """A reference to an input, a let, a function argument or an attribute."""

    id: str
    pos: int


@record
class ListExpr:
    """A list literal `[a, b, ...]`."""

    items: tuple
    pos: int


@record
class SliceExpr:
    """A slice `start:stop:step` inside an index; absent parts are None."""

    start: "Node | None"
    stop: "Node | None"
    step: "Node | None"
    pos: int


@record
class IndexExpr:
    """The bracketed part of `x[...]`: one item per comma-separated position."""

    items: tuple
    pos: int


@record
class Call:
    """An op or function application; every operator is normalized to one."""

    func: str
    args: tuple
    kwargs: tuple[tuple[str, "Node"], ...]
    pos: int


Node = Union[Const, Name, ListExpr, SliceExpr, IndexExpr, Call]


class ExpressionError(SpecError):
    """A problem inside one expression, at character offset `pos` of its text."""

    def __init__(self, message: str, pos: int, text: str = "", *, hint: str | None = None) -> None:
        self.pos = pos
        # Newlines become spaces so the caret stays under the offending character.
        super().__init__(message, path="<expression>", line=1, column=pos + 1,
                         source_line=text.replace("\n", " "), hint=hint)


def children(node: Node) -> tuple:
    """The direct sub-nodes of `node`, in source order, skipping absent slice parts."""
    if isinstance(node, Call):
        return node.args + tuple(value for _, value in node.kwargs)
    if isinstance(node, (ListExpr, IndexExpr)):
        return node.items
    if isinstance(node, SliceExpr):
        return tuple(part for part in (node.start, node.stop, node.step) if part is not None)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children (iterative: no recursion limit)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def depth(node: Node) -> tuple[int, Node]:
    """The tree's depth (a leaf is 1) and the first node found at that depth."""
    deepest, where = 0, node
    stack = [(node, 1)]
    while stack:
        current, level = stack.pop()
        if level > deepest:
            deepest, where = level, current
        stack.extend((child, level + 1) for child in children(current))
    return deepest, where
