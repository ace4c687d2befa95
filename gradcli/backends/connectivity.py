"""Which tensor fed which op in one eager build, and what that says about connectedness.

The numpy core decides "unconnected" structurally: a gradient is None when no
path of ops whose rules return a gradient leads from the input to the output.
Eager frameworks each have their own idea (torch and TensorFlow mostly agree,
TensorFlow registers no gradient for some ops, the op table's `no_gradient_in`; jax has
no None at all), so every eager build records this small graph and decides the same way
the core does. Tensors are keyed by identity; the graph keeps them alive.
"""
from __future__ import annotations

from ..ops import OPS

# Piecewise-constant ops (the op table's `step`): their derivative is zero wherever it exists
# (the core's rules for them give zeros_like), and a framework may register none (the table's
# `no_gradient_in`), so a connected path through one can get None.
STEPS = frozenset(name for name, spec in OPS.items() if spec.step)


class Graph:
    """Which tensors (by identity) fed which op, and which inputs its backward feeds."""

    __slots__ = ("nodes", "ops", "keep")

    def __init__(self) -> None:
        self.nodes: list[tuple[tuple, tuple, tuple, tuple]] = []
        self.ops: list[str | None] = []  # each node's op name (None: a tensor the build added)
        self.keep: list = []  # holds the tensors so that their ids stay unique

    def add(self, inputs, outputs, floats, pattern, op: str | None = None) -> None:
        self.keep.append((inputs, outputs))
        self.nodes.append((tuple(map(id, inputs)), tuple(map(id, outputs)), tuple(floats),
                           tuple(pattern)))
        self.ops.append(op)

    def carried(self, sources: set, y: int) -> set:
        """The sources a gradient of y reaches, walking as the core's gc.gradients does."""
        reaching, relevant = set(sources), []
        for node in self.nodes:
            if any(i in reaching for i in node[0]):
                relevant.append(node)
                reaching.update(o for o, f in zip(node[1], node[2]) if f)
        if y not in reaching:
            return set()
        carried = {y}
        for ins, outs, _, pattern in reversed(relevant):
            if any(o in carried for o in outs):
                carried.update(i for i, p in zip(ins, pattern) if p and i in reaching)
        return carried & sources

    def path_ops(self, y: int, x: int) -> list[tuple[str, bool]]:
        """(op name, cut) for each op on a path from x to y, in build order, once each; cut: the
        op lets no gradient from y into x along the path (the table gives the path's inputs no
        gradient, or its outputs on the path are not float: a comparison, an index)."""
        reach, on = {x}, []
        for node, op in zip(self.nodes, self.ops):
            if any(i in reach for i in node[0]):
                reach.update(node[1])
                on.append((node, op))
        leads, found = {y}, []
        for (ins, outs, floats, pattern), op in reversed(on):
            path_outs = [f for o, f in zip(outs, floats) if o in leads]
            if not path_outs:
                continue
            path_ins = [p for i, p in zip(ins, pattern) if i in reach]
            leads.update(i for i in ins if i in reach)
            if op is not None:
                found.append((op, not (any(path_ins) and any(path_outs))))
        return list(dict.fromkeys(reversed(found)))

    def depends(self, y: int, x: int, held: set) -> bool:
        """Whether y's value depends on x, not through the held tensors (core numeric's test)."""
        if y == x:
            return True
        producer = {o: node for node in self.nodes for o in node[1]}
        stack, seen = [y], {y}
        while stack:
            node = producer.get(stack.pop())
            if node is None:
                continue
            for i in node[0]:
                if i == x:
                    return True
                if i not in seen and i not in held:
                    seen.add(i)
                    stack.append(i)
        return False
