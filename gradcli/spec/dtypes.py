"""Each expression's dtype by construction, worked out as the spec loads; and the refusal of an
op on tensors of two dtypes (int64 + float64, int32 + int64, float32 + float64, a boolean
beside a number tensor) with its place, so that `check` catches it as `run` does.

TensorFlow 2.21 promotes no dtype to another: every binary op, where's branches, clip's
bounds and concat's or stack's list must hold one dtype, where numpy, torch and jax would
promote silently (k + x was [-6.0, 7.0, 6.0] there, an error on tensorflow). Where the
expression shows both dtypes (declared inputs, casts, comparisons, lets holding them) the
loader refuses here; where only the built tensors show them (a function's argument), every
backend refuses in the same words (ops.table.mixed_dtypes, core/ops_math.one_dtype,
backends/eager_args). A bare number is no tensor: it takes the dtype beside it
(core/ops_math.number_dtype), so `k + 2` and `stack([k, 1])` stay int64; as TensorFlow
converts it to that dtype, a float beside an integer tensor is refused (`k + 2.0`,
`where(c, k, 2.0)`: refuse_float_numbers).

A node's dtype is a dtype name, NUMBER (a bare number or list of numbers) or None (not known
without building: the check then leaves it to the run). It comes from the op table, not from
building: an input's declared dtype, then each node from its children, in the order names are
defined. spec/booleans.py reads "boolean by construction" from the same walk.
"""
from __future__ import annotations

from gradcli.lang.ast import Call, Const, ListExpr, Name, walk
from gradcli.lang.places import Place
from gradcli.ops import OPS
from gradcli.ops.table import (
    DTYPE_ORDER,
    FLOAT_ONLY,
    float_number,
    mixed_dtypes,
    non_float,
    same_dtype_params,
)
from gradcli.spec.arrays import FLOAT_DTYPES
from gradcli.spec.model import Experiment, Expr, Location

NUMBER = "number"
# the key under which visit gives a check the lets in scope that hold a bare number or list of
# numbers (name -> its Expr): `two: 2.0` is a number at run time, taking the dtype beside it
NUMBER_LETS = "number lets"
# ops whose value has the dtype of their first tensor argument
SAME_DTYPE = frozenset({"getitem", "reshape", "transpose", "identity", "stop_gradient",
                        "zeros_like", "ones_like", "sum", "mean", "max", "min", "prod"})
_INTEGER_KEPT = frozenset({"neg", "abs", "square", "sign"})  # unary ops that keep an integer


def visit(exp: Experiment, *checks) -> None:
    """check(expr, dtypes, key, like) for each of checks on every expression of exp, in the
    order its names are defined (one walk for all: it is on every load's path); dtypes maps
    id(node) to the node's dtype (node_dtypes), like is what a hint casts a boolean or an
    integer to."""
    floats = [n for n, spec in exp.inputs.items() if spec.dtype in FLOAT_DTYPES]
    like = f"dtype({floats[0]})" if floats else exp.dtype
    known = {n: spec.dtype for n, spec in exp.inputs.items()}
    numbers: dict[str, Expr] = {}  # the lets holding a bare number (NUMBER_LETS)
    functions: dict[str, str | None] = {}

    def seen(expr: Expr, names: dict, key: str, like: str, held: dict) -> dict:
        dtypes = node_dtypes(expr.node, names, functions)
        dtypes[NUMBER_LETS] = held
        for check in checks:
            check(expr, dtypes, key, like)
        return dtypes

    for fname, fn in exp.functions.items():  # a function calls only those above it
        local: dict[str, str | None] = {}  # its arguments' dtypes are the caller's: unknown
        held: dict[str, Expr] = {}
        for name, expr in fn.lets:
            _bind((name,), expr, seen(expr, local, f"functions.{fname}.let.{name}", exp.dtype,
                                      held), local, held)
        dtypes = seen(fn.forward, local, f"functions.{fname}.forward", exp.dtype, held)
        for i, grad in enumerate(fn.grads):
            if grad is not None:
                seen(grad, local, f"functions.{fname}.gradient[{i}]", exp.dtype, held)
        functions[fname] = dtypes[id(fn.forward.node)]
    for name, spec in exp.register.items():
        for grad in spec.grads:
            if grad is not None:
                seen(grad, {}, f"register.{name}", exp.dtype, {})
    for let in exp.lets:
        _bind(let.names, let.expr, seen(let.expr, known, f"let.{', '.join(let.names)}", like,
                                        numbers), known, numbers)
    for out in exp.outputs:
        _bind((out.name,), out.expr, seen(out.expr, known, f"outputs.{out.name}", like, numbers),
              known)
    if exp.train is not None:
        for section in ("constraints", "metrics"):
            for name, expr in getattr(exp.train, section).items():
                seen(expr, known, f"train.{section}.{name}", like, numbers)


def _bind(names: tuple, expr: Expr, dtypes: dict, known: dict, numbers: dict | None = None) -> None:
    if len(names) == 1:
        dtype = dtypes[id(expr.node)]
        known[names[0]] = None if dtype == NUMBER else dtype
        values = list(_numbers(expr.node, dtypes[NUMBER_LETS])) if numbers is not None else []
        if values and None not in values:  # a let holding a bare number (or a let holding one)
            numbers[names[0]] = expr


def refuse_mixed_dtypes(expr: Expr, dtypes: dict, key: str, like: str) -> None:
    """Raise a SpecError at the first op of expr whose tensors have two dtypes by
    construction (a check for visit)."""
    mixes = [(node.pos, node, operands) for node in walk(expr.node)
             for operands in [_shared_operands(node)]
             if len({dtypes[id(o)] for o in operands} - {None, NUMBER}) > 1]
    if mixes:
        _, node, operands = min(mixes, key=lambda m: m[0])
        first = {}  # each dtype's first operand, for the hint
        for o in operands:
            if dtypes[id(o)] not in (None, NUMBER):
                first.setdefault(dtypes[id(o)], Place(expr, o).text)
        name = node.func if isinstance(node, Call) else "stack"
        message, hint = mixed_dtypes(name, list(first)[:2], list(first.values())[:2])
        raise spec_error(expr, node.pos, message, key, hint)


def refuse_float_numbers(expr: Expr, dtypes: dict, key: str, like: str) -> None:
    """Raise a SpecError at the first op of expr whose operands share one dtype (a binary
    operator, where's branches, clip's bounds, concat's or stack's list, a list literal of
    tensors) that holds an integer tensor by construction and a float number, whole or not
    (`k + 2.0`, `k * 0.5`, `where(c, k, 2.0)`, `stack([k, 1.5])`): TensorFlow converts the
    number to the tensor's dtype and refuses a float (a check for visit; every backend refuses
    it at run time in the same words, core/ops_math.no_float_number)."""
    found = []
    lets = dtypes.get(NUMBER_LETS, {})
    for node in walk(expr.node):
        if isinstance(node, (ListExpr, Call)):
            operands = _shared_operands(node)  # none for an op without a shared dtype
            tensor = next((o for o in operands if dtypes[id(o)] in ("int32", "int64")), None)
            number = next((o for o in operands if _float_number(o, lets)), None)
            if tensor is not None and number is not None:
                found.append((node.pos, node, tensor, number))
    if found:
        _, node, tensor, number = min(found, key=lambda f: f[0])
        name = node.func if isinstance(node, Call) else "stack"
        text, shown = Place(expr, tensor).text, Place(expr, number).text
        held = _held(number, lets)
        if held is not None:  # a let holding the number: both its name and its number
            shown = f"{shown} (= {Place(held, held.node).text})"
        message, hint = float_number(name, shown, dtypes[id(tensor)], text, like)
        raise spec_error(expr, node.pos, message, key, hint)


def _float_number(node, lets: dict) -> bool:
    """Whether node is a bare float number, or a list of numbers holding one (either of them
    held by a let: lets, NUMBER_LETS)."""
    values = list(_numbers(node, lets))
    return bool(values) and None not in values and any(type(v) is float for v in values)


def _held(node, lets: dict):
    """The Expr of the number a let name holds (through lets holding lets), or None."""
    while isinstance(node, Name) and node.id in lets:
        held = lets[node.id]
        if not isinstance(held.node, Name):
            return held
        node = held.node
    return None


def _numbers(node, lets: dict):
    """The numbers of a bare number or (nested) list of them, a let name holding one seen
    through (lets: name -> Expr, NUMBER_LETS); None for anything else."""
    if isinstance(node, Const):
        yield node.value if isinstance(node.value, (int, float)) and type(node.value) is not bool \
            else None
    elif isinstance(node, ListExpr):
        for item in node.items:
            yield from _numbers(item, lets)
    elif isinstance(node, Name) and node.id in lets:
        yield from _numbers(lets[node.id].node, lets)
    else:
        yield None


def refuse_non_floats(expr: Expr, dtypes: dict, key: str, like: str) -> None:
    """Raise a SpecError at the first logsumexp, softmax or log_softmax of expr whose argument
    is an integer or a boolean by construction (a check for visit; at run time every backend
    refuses it in the same words as it builds the op: ops/table.refused_dtype)."""
    for node in walk(expr.node):
        if isinstance(node, Call) and node.func in FLOAT_ONLY:
            x = argument(node, "x")
            dtype = None if x is None else dtypes[id(x)]
            if dtype not in (None, NUMBER) and not dtype.startswith("float"):
                message, hint = non_float(node.func, dtype, Place(expr, x).text, like)
                raise spec_error(expr, node.pos, message, key, hint)


def spec_error(expr: Expr, pos: int, message: str, key: str, hint: str):
    """A SpecError at character pos of the expression, placed as lang.interpret.spec_error
    places a run's errors (a --set value has no line: the column in the value, then)."""
    loc = expr.loc
    if loc.line == 0:
        return loc.error(message + loc.in_value(loc.column + pos), key=key, hint=hint)
    return Location(loc.path, loc.line, loc.column + pos, loc.source_line).error(
        message, key=key, hint=hint)


def argument(node: Call, param: str):
    """The node given for the op's parameter param, or None."""
    spec = OPS.get(node.func)
    if spec is None:
        return None
    bound = dict(zip(spec.params, node.args))
    bound.update(node.kwargs)
    return bound.get(param)


def _shared_operands(node) -> list:
    """The nodes that must hold one dtype at node (same_dtype_params): a list literal's items
    are stacked, concat's and stack's list is its items."""
    if isinstance(node, ListExpr):
        return list(node.items)
    if not isinstance(node, Call) or node.func not in OPS:
        return []
    spec = OPS[node.func]
    params = same_dtype_params(spec)
    if spec.variadic:
        values = argument(node, params[0]) if params else None
        return list(values.items) if isinstance(values, ListExpr) else []
    return [a for a in (argument(node, p) for p in params) if a is not None]


def node_dtypes(root, known: dict, functions: dict) -> dict:
    """id(node) -> the node's dtype by construction (children before parents)."""
    dtypes: dict[int, str | None] = {}
    for node in reversed(list(walk(root))):
        dtypes[id(node)] = _dtype(node, dtypes, known, functions)
    return dtypes


def _common(dtypes: list):
    """The one dtype of operands that must share it: None where one is unknown or they differ
    (refused by _check_mixed), NUMBER where all are bare numbers."""
    tensors = set(dtypes) - {NUMBER}
    if not tensors:
        return NUMBER if dtypes else None
    if len(tensors) > 1 or None in tensors:
        return None
    dtype = tensors.pop()
    # a number beside a boolean becomes a float tensor (number_dtype): the run refuses the mix
    return None if dtype == "bool" and NUMBER in dtypes else dtype


def _dtype(node, dtypes: dict, known: dict, functions: dict):
    if isinstance(node, Const):
        if type(node.value) is bool:
            return "bool"
        return NUMBER if isinstance(node.value, (int, float)) else None
    if isinstance(node, Name):
        return known.get(node.id)
    if isinstance(node, ListExpr):
        items = [dtypes[id(i)] for i in node.items]
        if items and all(isinstance(i, Const) and type(i.value) is bool for i in node.items):
            return "bool"
        return NUMBER if items and all(d == NUMBER for d in items) else _stacked(items)
    if not isinstance(node, Call):
        return None
    func = node.func
    if func in functions:
        return functions[func]
    spec = OPS.get(func)
    if spec is None:
        return None
    if spec.result == "bool":
        return "bool"
    if spec.result == "index":
        return "int64"
    if func == "cast":
        dtype = argument(node, "dtype")
        if isinstance(dtype, Call) and dtype.func == "dtype":  # cast(c, dtype(b))
            inner = dtypes[id(dtype.args[0])] if dtype.args else None
            return None if inner == NUMBER else inner
        return dtype.value if isinstance(dtype, Const) and dtype.value in DTYPE_ORDER else None
    shared = same_dtype_params(spec)
    if shared:
        if spec.variadic:
            values = argument(node, shared[0])
            return _stacked([dtypes[id(values)]]) if values is not None else None
        common = _common([dtypes[id(a)] for a in (argument(node, p) for p in shared)
                          if a is not None])
        if common == NUMBER:  # an op on bare numbers alone: a tensor of the run's float dtype
            return None
        if func == "div" and common in ("int32", "int64"):
            return "float64"  # integer truediv, as TensorFlow's
        return common
    first = dtypes[id(node.args[0])] if node.args else None
    if first == NUMBER:
        return None
    if func in SAME_DTYPE:
        return first
    if spec.family in ("unary", "reduction", "along_axis") and spec.outputs == 1:
        return first if first in FLOAT_DTYPES or func in _INTEGER_KEPT else None
    return None


def _stacked(items: list):
    """The dtype of a list of tensors stacked: numbers among them take a number tensor's
    dtype, as TensorFlow's (a float beside an integer is refused: refuse_float_numbers); beside
    a boolean they become float tensors, refused at run time."""
    tensors = set(items) - {NUMBER}
    if len(tensors) != 1:
        return None
    dtype = tensors.pop()
    return None if dtype == "bool" and NUMBER in items else dtype
