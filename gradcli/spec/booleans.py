"""Refuse, as the spec loads, a sum, mean, max, min or prod of a tensor that is boolean by
construction.

TensorFlow has no boolean kernel for reduce_sum, _mean, _max, _min or _prod (numpy and jax
would count, torch fail or answer in its own words), so no backend of gradcli has one either
(ops/kernels.refuse_boolean). Where the expression itself shows the boolean (a comparison,
a logical op, cast(..., bool), a boolean input or a let holding one, an index or reshape of those),
`check` and `run` refuse it here with its place, before any backend is chosen; where only
the built tensor shows it (a function's argument, say), every backend refuses it alike.

"Boolean by construction" is worked out here from the op table, not by building: an input's
declared dtype, then each node from its children, in the order names are defined.
"""
from __future__ import annotations

from gradcli.lang.ast import Call, Const, ListExpr, Name, walk
from gradcli.lang.places import Place
from gradcli.ops import OPS
from gradcli.ops.table import boolean_reduction
from gradcli.spec.arrays import FLOAT_DTYPES
from gradcli.spec.lint_discrete import BOOLEAN_OPS
from gradcli.spec.model import Experiment, Expr, Location

REFUSED = ("sum", "mean", "max", "min", "prod")
# ops whose value has the dtype of their first tensor argument
_SAME_DTYPE = frozenset({"getitem", "reshape", "transpose", "identity", "stop_gradient",
                         "zeros_like", "ones_like"})


def refuse_boolean_reductions(exp: Experiment) -> None:
    """Raise a SpecError at the first reduction in REFUSED whose argument is boolean by
    construction."""
    floats = [n for n, spec in exp.inputs.items() if spec.dtype in FLOAT_DTYPES]
    like = f"dtype({floats[0]})" if floats else exp.dtype  # what the hint casts to
    known = {n for n, spec in exp.inputs.items() if spec.dtype == "bool"}
    functions: dict[str, bool] = {}
    for fname, fn in exp.functions.items():  # a function calls only those above it
        local: set[str] = set()
        for name, expr in fn.lets:
            _check(expr, local, functions, f"functions.{fname}.let.{name}", exp.dtype)
            _bind((name,), expr, local, functions)
        _check(fn.forward, local, functions, f"functions.{fname}.forward", exp.dtype)
        for i, grad in enumerate(fn.grads):
            if grad is not None:
                _check(grad, local, functions, f"functions.{fname}.gradient[{i}]", exp.dtype)
        functions[fname] = _kinds(fn.forward.node, local, functions)[id(fn.forward.node)]
    for name, spec in exp.register.items():
        for grad in spec.grads:
            if grad is not None:
                _check(grad, set(), functions, f"register.{name}", exp.dtype)
    for let in exp.lets:
        _check(let.expr, known, functions, f"let.{', '.join(let.names)}", like)
        _bind(let.names, let.expr, known, functions)
    for out in exp.outputs:
        _check(out.expr, known, functions, f"outputs.{out.name}", like)
        _bind((out.name,), out.expr, known, functions)
    if exp.train is not None:
        for section in ("constraints", "metrics"):
            for name, expr in getattr(exp.train, section).items():
                _check(expr, known, functions, f"train.{section}.{name}", like)


def _bind(names: tuple, expr: Expr, known: set, functions: dict) -> None:
    if len(names) == 1 and _kinds(expr.node, known, functions)[id(expr.node)]:
        known.add(names[0])


def _check(expr: Expr, known: set, functions: dict, key: str, like: str) -> None:
    kinds = _kinds(expr.node, known, functions)
    for node in walk(expr.node):
        if isinstance(node, Call) and node.func in REFUSED:
            x = _argument(node, "x")
            if x is not None and kinds[id(x)]:
                message, hint = boolean_reduction(node.func, Place(expr, x).text, like)
                raise _error(expr, node.pos, message, key, hint)


def _error(expr: Expr, pos: int, message: str, key: str, hint: str):
    """A SpecError at character pos of the expression, placed as lang.interpret.spec_error
    places a run's errors (a --set value has no line: the column in the value, then)."""
    loc = expr.loc
    if loc.line == 0:
        return loc.error(message + loc.in_value(loc.column + pos), key=key, hint=hint)
    return Location(loc.path, loc.line, loc.column + pos, loc.source_line).error(
        message, key=key, hint=hint)


def _argument(node: Call, param: str):
    spec = OPS.get(node.func)
    if spec is None:
        return None
    bound = dict(zip(spec.params, node.args))
    bound.update(node.kwargs)
    return bound.get(param)


def _kinds(root, known: set, functions: dict) -> dict[int, bool]:
    """id(node) -> whether the node is boolean by construction (children before parents)."""
    kinds: dict[int, bool] = {}
    for node in reversed(list(walk(root))):
        kinds[id(node)] = _boolean(node, kinds, known, functions)
    return kinds


def _boolean(node, kinds: dict, known: set, functions: dict) -> bool:
    if isinstance(node, Const):
        return type(node.value) is bool
    if isinstance(node, Name):
        return node.id in known
    if isinstance(node, ListExpr):
        return bool(node.items) and all(kinds[id(i)] for i in node.items)
    if not isinstance(node, Call):
        return False
    func = node.func
    if func in functions:
        return functions[func]
    if func in BOOLEAN_OPS:
        return True
    if func == "cast":
        dtype = _argument(node, "dtype")
        if isinstance(dtype, Call) and dtype.func == "dtype":  # cast(c, dtype(b))
            return bool(dtype.args) and kinds[id(dtype.args[0])]
        return isinstance(dtype, Const) and dtype.value == "bool"
    if func == "where":
        a, b = _argument(node, "a"), _argument(node, "b")
        return a is not None and b is not None and kinds[id(a)] and kinds[id(b)]
    if func in ("concat", "stack"):
        values = _argument(node, "values")
        return values is not None and kinds[id(values)]
    if func in _SAME_DTYPE:
        return bool(node.args) and kinds[id(node.args[0])]
    return False
