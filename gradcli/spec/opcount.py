"""Count the ops a spec will build, before anything is built, and refuse past a limit.

A function is built again at every call, so a function that calls the previous
one twice doubles the graph at every level: forty levels fit in a kilobyte and
would build a trillion ops. The count expands every call (each function's cost
is computed once, so counting stays linear in the spec's size) and adds the
registered gradients that override_map runs once per matching op. A grad(y, x)
counts GRAD_FACTOR times the ops of y's graph (y and every let it reads, their own
grad() calls counted), so a gradient of a gradient of a long chain is refused
here rather than built.
"""
from __future__ import annotations

from collections import Counter

from gradcli.lang.ast import Call, Const, ListExpr, walk
from gradcli.lang.deps import Dependencies, grad_calls
from gradcli.ops import OPS, parts
from gradcli.spec.model import Experiment, Expr

MAX_OPS = 100_000  # ops one spec may build (documented in docs/untrusted.md)
# Calls of the table that build nothing: dtype(x) gives a dtype name, not a tensor.
_NOT_OPS = frozenset(name for name, spec in OPS.items() if spec.result == "dtype")
# What a grad(y, x) counts, per op of y's graph: its backward pass (about two ops per forward
# op) and the frameworks' rebuild of the lets between x and y (docs/untrusted.md).
GRAD_FACTOR = 3


class _Cost:
    """Ops an expression builds, by op type, and the function call that builds the most."""

    __slots__ = ("ops", "types", "heaviest")

    def __init__(self) -> None:
        self.ops = 0
        self.types: Counter = Counter()
        self.heaviest: tuple[int, str] = (0, "")  # (ops, function name)

    def add(self, other: "_Cost", times: int = 1) -> None:
        self.ops += other.ops * times
        for op, n in other.types.items():
            self.types[op] += n * times


def count_ops(exp: Experiment, limit: int = MAX_OPS) -> int:
    """The number of ops `exp` builds; a SpecError at the place that passes `limit`."""
    functions: dict[str, _Cost] = {}
    for name, spec in exp.functions.items():  # a body only calls functions defined above it
        cost = _cost(spec.forward, functions)
        for _, let in spec.lets:
            cost.add(_cost(let, functions))
        for grad in spec.grads:
            if grad is not None:
                cost.add(_cost(grad, functions))
        cost.ops += 1  # the custom-gradient op that wraps the call
        functions[name] = cost
    total = _Cost()
    graphs = _Graphs(functions)
    named = [(f"let.{', '.join(let.names)}", let.expr, let.names) for let in exp.lets]
    for key, expr, names in named + [(f"outputs.{out.name}", out.expr, ())
                                     for out in exp.outputs]:
        cost = _cost(expr, functions)
        grads = graphs.grad_ops(expr.node)
        cost.ops += grads
        total.add(cost)
        if total.ops > limit:
            raise _too_many(exp, expr, key, cost, total.ops, limit, grads)
        graphs.add(names, expr.node, cost.ops)
    for entry in exp.override_map:
        rule = exp.register.get(entry.gradient)
        if rule is None:
            continue
        per_op = _Cost()
        for grad in rule.grads:
            if grad is not None:
                per_op.add(_cost(grad, functions))
        matched = total.types[entry.op]
        total.ops += per_op.ops * matched
        if total.ops > limit:
            raise entry.loc.error(
                f"gradient {entry.gradient!r} builds {per_op.ops:,} ops and runs once for each "
                f"of the {matched:,} {entry.op!r} ops: the spec would build {total.ops:,} ops; "
                f"the limit is {limit:,}", key="override_map", hint="see docs/untrusted.md")
    return total.ops


class _Graphs:
    """The ops of each let (its grad() calls counted), to price a grad(y, x) by y's graph."""

    def __init__(self, functions: dict[str, _Cost]) -> None:
        self.functions = functions
        self.upstream = Dependencies()
        self.let_ops: dict[str, int] = {}

    def add(self, names, node, ops: int) -> None:
        self.upstream.add(names, node)
        for name in names:  # a let of several names counts once per name: an upper bound
            self.let_ops[name] = ops

    def grad_ops(self, node) -> int:
        """What the grad() calls in an expression add, at every depth."""
        return sum(GRAD_FACTOR * self.graph_ops(y) for y, _ in grad_calls(node))

    def graph_ops(self, y) -> int:
        """Ops of y's graph: y's own tree and every let it reads."""
        lets = sum(self.let_ops.get(name, 0) for name in self.upstream.of(y))
        return _cost_of(y, self.functions).ops + self.grad_ops(y) + lets


def _cost(expr: Expr, functions: dict[str, _Cost]) -> _Cost:
    return _cost_of(expr.node, functions)


def _cost_of(tree, functions: dict[str, _Cost]) -> _Cost:
    cost = _Cost()
    for node in walk(tree):
        if isinstance(node, Call):
            called = functions.get(node.func)
            if called is not None:
                cost.add(called)
                cost.heaviest = max(cost.heaviest, (called.ops, node.func))
            elif node.func in OPS and node.func not in _NOT_OPS:
                for part in parts(node.func):  # a composite builds its parts, each an op
                    cost.ops += 1
                    cost.types[part] += 1
        elif isinstance(node, ListExpr) and not all(isinstance(i, (Const, ListExpr))
                                                    for i in node.items):
            cost.ops += 1  # a list of tensors is stacked into one
            cost.types["stack"] += 1
    return cost


def _too_many(exp: Experiment, expr: Expr, key: str, cost: _Cost, total: int, limit: int,
              grads: int = 0):
    counted = "functions expanded" if not grads else \
        f"functions expanded; {grads:,} for its grad() calls, {GRAD_FACTOR}x the ops of each y's graph"
    message = (f"this expression builds {cost.ops:,} ops ({counted}), which brings the "
               f"spec to {total:,}; the limit is {limit:,} ops per spec")
    per_call, name = cost.heaviest
    if name:
        message += (f"; most come from {name!r} ({exp.functions[name].loc}), which builds "
                    f"{per_call:,} ops at each call")
    return expr.loc.error(message, key=key, hint="see docs/untrusted.md")
