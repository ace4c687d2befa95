"""Count the ops a spec will build, before anything is built, and refuse past a limit.

A function is built again at every call, so a function that calls the previous
one twice doubles the graph at every level: forty levels fit in a kilobyte and
would build a trillion ops. The count expands every call (each function's cost
is computed once, so counting stays linear in the spec's size) and adds the
registered gradients that override_map runs once per matching op.
"""
from __future__ import annotations

from collections import Counter

from gradcli.lang.ast import Call, Const, ListExpr, walk
from gradcli.ops import OPS
from gradcli.spec.model import Experiment, Expr

MAX_OPS = 100_000  # ops one spec may build (documented in docs/untrusted.md)
# Calls of the table that build nothing: dtype(x) gives a dtype name, not a tensor.
_NOT_OPS = frozenset(name for name, spec in OPS.items() if spec.result == "dtype")


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
    named = [(f"let.{', '.join(let.names)}", let.expr) for let in exp.lets]
    for key, expr in named + [(f"outputs.{out.name}", out.expr) for out in exp.outputs]:
        cost = _cost(expr, functions)
        total.add(cost)
        if total.ops > limit:
            raise _too_many(exp, expr, key, cost, total.ops, limit)
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


def _cost(expr: Expr, functions: dict[str, _Cost]) -> _Cost:
    cost = _Cost()
    for node in walk(expr.node):
        if isinstance(node, Call):
            called = functions.get(node.func)
            if called is not None:
                cost.add(called)
                cost.heaviest = max(cost.heaviest, (called.ops, node.func))
            elif node.func in OPS and node.func not in _NOT_OPS:
                cost.ops += 1
                cost.types[node.func] += 1
        elif isinstance(node, ListExpr) and not all(isinstance(i, (Const, ListExpr))
                                                    for i in node.items):
            cost.ops += 1  # a list of tensors is stacked into one
            cost.types["stack"] += 1
    return cost


def _too_many(exp: Experiment, expr: Expr, key: str, cost: _Cost, total: int, limit: int):
    message = (f"this expression builds {cost.ops:,} ops (functions expanded), which brings the "
               f"spec to {total:,}; the limit is {limit:,} ops per spec")
    per_call, name = cost.heaviest
    if name:
        message += (f"; most come from {name!r} ({exp.functions[name].loc}), which builds "
                    f"{per_call:,} ops at each call")
    return expr.loc.error(message, key=key, hint="see docs/untrusted.md")
