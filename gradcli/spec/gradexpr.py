"""The checks of grad(y, x) that need the whole spec: x is upstream of y, and a float.

The expression checker (exprcheck.py) knows one expression; whether y depends
on x at all is a question about the lets between them, answered here on the
names each let reads (transitively), before anything is built.
"""
from __future__ import annotations

from gradcli.spec.ast import Call, Name, Node, walk
from gradcli.spec.exprcheck import GRAD, GRAD_PARAMS
from gradcli.spec.sites import Site, error_at


def names_read(node: Node) -> set[str]:
    """Every name an expression refers to (inputs, lets, attributes alike)."""
    return {n.id for n in walk(node) if isinstance(n, Name)}


def grad_calls(node: Node):
    """(y, x) of every grad(y, x) call in an expression, outermost first."""
    for n in walk(node):
        if isinstance(n, Call) and n.func == GRAD:
            bound = dict(zip(GRAD_PARAMS, n.args))
            bound.update(n.kwargs)
            yield bound["y"], bound["x"]


class Upstream:
    """Which names each let depends on, through the lets before it (filled in let order)."""

    def __init__(self, inputs) -> None:
        self.inputs = inputs               # name -> InputSpec
        self.deps: dict[str, set[str]] = {}

    def of(self, node: Node) -> set[str]:
        """The names an expression's value may depend on."""
        found: set[str] = set()
        for name in names_read(node):
            found.add(name)
            found |= self.deps.get(name, set())
        return found

    def add(self, names, node: Node) -> None:
        deps = self.of(node)
        for name in names:
            self.deps[name] = deps

    def check(self, site: Site) -> None:
        """Every grad(y, x) in the site: x is read by y (perhaps through lets) and is a float."""
        for y, x in grad_calls(site.expr.node):
            spec = self.inputs.get(x.id)
            if spec is not None and spec.value.dtype.kind != "f":
                raise error_at(site.node, x.pos, site.key,
                               f"grad(y, x): input {x.id!r} is {spec.value.dtype}; a gradient is "
                               "taken with respect to a float tensor",
                               f"cast it first: let: {{xf: cast({x.id}, float64)}}")
            if x.id not in self.of(y):
                raise error_at(site.node, x.pos, site.key,
                               f"grad(y, x): y does not depend on {x.id!r}, so there is no "
                               "gradient to take", "x must be an input or a let that y is "
                                                   "computed from")

