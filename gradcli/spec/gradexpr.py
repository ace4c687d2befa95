"""The checks of grad(y, x) that need the whole spec: x is upstream of y, and a float.

The expression checker (lang/checks.py) knows one expression; whether y depends
on x at all is a question about the lets between them, answered here on the
names each let reads (transitively), before anything is built.
"""
from __future__ import annotations

from gradcli.lang.deps import Dependencies, grad_calls
from gradcli.spec.arrays import FLOAT_DTYPES
from gradcli.spec.fields import expect_names, fail
from gradcli.spec.sites import Site, error_at

# Bounds on what grad() may ask for (docs/untrusted.md): each level of a gradient of a
# gradient builds a backward pass over everything below it (about three times its ops), and
# the frameworks build the lets between x and y again for every call.
MAX_GRAD_ORDER = 4
MAX_GRAD_CALLS = 64


class Upstream(Dependencies):
    """The dependency tables (lang/deps.py) plus what the checks count: grad() calls made,
    and the lets a grad(y, x) computes through."""

    def __init__(self, inputs) -> None:
        super().__init__()
        self.inputs = inputs               # name -> InputSpec
        self.calls = 0
        self.through: dict[str, str] = {}  # let -> the x of a grad(y, x) computed through it

    def check(self, site: Site) -> None:
        """Every grad(y, x) in the site: x is read by y (perhaps through lets) and is a float."""
        for y, x in grad_calls(site.expr.node):
            self.calls += 1
            if self.calls > MAX_GRAD_CALLS:
                raise error_at(site.node, x.pos, site.key,
                               f"a spec may call grad() at most {MAX_GRAD_CALLS} times", None)
            if self.order_of(y) + 1 > MAX_GRAD_ORDER:
                raise error_at(site.node, y.pos, site.key,
                               f"this grad() is a derivative of order {self.order_of(y) + 1} "
                               f"(a gradient of a gradient ...); the limit is {MAX_GRAD_ORDER}",
                               "see docs/untrusted.md")
            upstream = self.of(y)
            for name in upstream & self.downstream(x.id):  # between x and y: built again
                self.through.setdefault(name, x.id)
            spec = self.inputs.get(x.id)
            if spec is not None and spec.dtype not in FLOAT_DTYPES:
                raise error_at(site.node, x.pos, site.key,
                               f"grad(y, x): input {x.id!r} is {spec.dtype}; a gradient is "
                               "taken with respect to a float tensor",
                               f"cast it first: let: {{xf: cast({x.id}, float64)}}")
            if x.id not in upstream:
                raise error_at(site.node, x.pos, site.key,
                               f"grad(y, x): y does not depend on {x.id!r}, so there is no "
                               "gradient to take", "x must be an input or a let that y is "
                                                   "computed from")


    def refuse_through(self, node, key: str) -> None:
        """wrt and stop_gradients may not name a let that a grad(y, x) computes through: the
        frameworks' backward passes read such a let's value inside the op that makes it, out
        of reach of a probe or a stop, so its partial derivative would differ by backend."""
        if node is None or not self.through:
            return
        for name, name_node in expect_names(node, key):
            if name in self.through:
                raise fail(name_node, key, f"{name!r} lies between x and y of a grad(y, "
                                           f"{self.through[name]}): its gradient is not "
                                           f"defined on its own there; name {self.through[name]!r}"
                                           " or a let that grad() does not compute through")
