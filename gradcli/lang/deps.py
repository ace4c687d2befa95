"""What each let depends on, read off the expressions alone: the names an expression reads
(through the lets before it) and how many levels of grad() its value holds.

The spec's grad(y, x) checks (spec/gradexpr.py) and the interpreter's rebuild of the lets
between x and y (interpret.py) both read these tables.
"""
from __future__ import annotations

from gradcli.lang.ast import Call, Name, Node, children, walk
from gradcli.lang.checks import GRAD, GRAD_PARAMS


def names_read(node: Node) -> set[str]:
    """Every name an expression refers to (inputs, lets, attributes alike)."""
    return {n.id for n in walk(node) if isinstance(n, Name)}


def grad_args(call: Call) -> dict[str, Node]:
    """A grad() call's arguments by parameter name, however they were passed."""
    bound = dict(zip(GRAD_PARAMS, call.args))
    bound.update(call.kwargs)
    return bound


def grad_calls(node: Node):
    """(y, x) of every grad(y, x) call in an expression, outermost first."""
    for n in walk(node):
        if isinstance(n, Call) and n.func == GRAD:
            bound = grad_args(n)
            yield bound["y"], bound["x"]


class Dependencies:
    """The names each let reads directly (filled in let order), walked when asked, and how
    many levels of grad() each holds.

    Only direct reads are stored: a table of everything each let depends on transitively
    made a chain of n lets cost n**2/2 set entries (docs/untrusted.md)."""

    def __init__(self) -> None:
        self.reads: dict[str, set[str]] = {}  # let -> names it reads, in let order
        self.order: dict[str, int] = {}       # name -> levels of grad() in its value

    def of(self, node: Node) -> set[str]:
        """The names an expression's value may depend on (through the lets it reads)."""
        found: set[str] = set()
        pending = list(names_read(node))
        while pending:
            name = pending.pop()
            if name not in found:
                found.add(name)
                pending.extend(self.reads.get(name, ()))
        return found

    def downstream(self, x: str) -> set[str]:
        """The lets whose value depends on x (x itself excluded): one pass in let order, as a
        let reads only the names before it."""
        hit = {x}
        for name, reads in self.reads.items():
            if name != x and not reads.isdisjoint(hit):
                hit.add(name)
        hit.discard(x)
        return hit

    def add(self, names, node: Node) -> None:
        reads, order = names_read(node), self.order_of(node)
        for name in names:
            self.reads[name] = reads
            self.order[name] = order
    def order_of(self, node: Node) -> int:
        """Levels of grad() in an expression's value: grad(y, x) adds one to y's."""
        if isinstance(node, Name):
            return self.order.get(node.id, 0)
        if isinstance(node, Call) and node.func == GRAD:
            return 1 + self.order_of(grad_args(node)["y"])
        return max((self.order_of(child) for child in children(node)), default=0)
