"""Which tensor fed which op in one eager build, and what that says about connectedness.

The numpy core decides "unconnected" structurally: a gradient is None when no
path of ops whose rules return a gradient leads from the input to the output.
Eager frameworks each have their own idea (torch and TensorFlow mostly agree,
TensorFlow registers no gradient for round, floor and ceil, jax has no None at
all), so every eager build records this small graph and decides the same way
the core does. Tensors are keyed by identity; the graph keeps them alive.
"""
from __future__ import annotations


class Graph:
    """Which tensors (by identity) fed which op, and which inputs its backward feeds."""

    __slots__ = ("nodes", "keep")

    def __init__(self) -> None:
        self.nodes: list[tuple[tuple, tuple, tuple, tuple]] = []
        self.keep: list = []  # holds the tensors so that their ids stay unique

    def add(self, inputs, outputs, floats, pattern) -> None:
        self.keep.append((inputs, outputs))
        self.nodes.append((tuple(map(id, inputs)), tuple(map(id, outputs)), tuple(floats),
                           tuple(pattern)))

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
