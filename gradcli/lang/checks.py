"""Check a parsed expression against its place: names in scope, calls, arity, attributes.

Tensor positions take numbers, names and calls; attribute positions (an op's
non-tensor parameters such as axis, keepdims, dtype, shape) take constants, so
every backend can build them without evaluating anything.
"""
from __future__ import annotations

import re

from gradcli.errors import did_you_mean
from gradcli.lang.ast import Call, Const, ExpressionError, IndexExpr, ListExpr, Name, Node, SliceExpr, walk
from gradcli.lang.parser import CONSTANT_NAMES
from gradcli.ops import DTYPES, OPS, tf_alias
from gradcli.record import Factory, record


@record
class Scope:
    """What one expression may refer to, and why a known name is out of reach here."""

    names: frozenset[str]
    functions: dict[str, tuple[str, ...]]            # callable user functions -> their args
    numbered: tuple[str, ...] = ()                   # prefixes allowed with digits: x -> x0, x1
    attributes: frozenset[str] = frozenset()         # op attribute names (register only)
    elsewhere: dict[str, str] = Factory(dict)  # name -> why it is not usable
    hint: str | None = None                          # what this place can see, for unknown names
    grads: bool = False                              # grad(y, x) allowed (the spec's let, outputs)

    def has(self, name: str) -> bool:
        if name in self.names:
            return True
        return any(re.fullmatch(re.escape(p) + r"[0-9]+", name) for p in self.numbered)


def _number(node) -> bool:
    return isinstance(node, Const) and type(node.value) in (int, float)


def _int(node) -> bool:
    return isinstance(node, Const) and type(node.value) is int


def _int_list(node) -> bool:
    return isinstance(node, ListExpr) and all(_int(item) for item in node.items)


def _show(node: Node) -> str:
    """A short description of a node for messages."""
    if isinstance(node, Const):
        return "none" if node.value is None else repr(node.value)
    if isinstance(node, Name):
        return f"the name {node.id!r}"
    if isinstance(node, ListExpr):
        return "a list"
    if isinstance(node, Call):
        return f"a call to {node.func}"
    return "a slice"


# Attribute parameter -> (test, what it must be). Unlisted attributes accept any constant.
_ATTRIBUTE_RULES = {
    "axis": (lambda n: _int(n) or _int_list(n) or (isinstance(n, Const) and n.value is None),
             "an integer, a list of integers or none"),
    "axes": (lambda n: _int_list(n) or (isinstance(n, Const) and n.value is None),
             "a list of integers or none"),
    "keepdims": (lambda n: isinstance(n, Const) and type(n.value) is bool, "True or False"),
    "shape": (lambda n: _int(n) or _int_list(n), "an integer or a list of integers"),
    "depth": (lambda n: _int(n) and n.value > 0, "a positive integer"),
}
_NUMBER_RULE = (_number, "a number")
GRAD = "grad"  # grad(y, x): a language construct, not an op of the table
GRAD_PARAMS = ("y", "x")
GRAD_SIGNATURE = "grad(y, x)"


class Checker:
    """Walks one expression; raises ExpressionError at the first problem."""

    def __init__(self, scope: Scope, text: str) -> None:
        self.scope, self.text = scope, text
        self.root: Node | None = None  # the whole expression, for did-you-mean's preferences

    def fail(self, message: str, node: Node, hint: str | None = None) -> ExpressionError:
        return ExpressionError(message, node.pos, self.text, hint=hint)

    def check(self, node: Node, unpack: int = 1) -> None:
        """Check a whole expression whose value is bound to `unpack` names."""
        self.root = node
        outputs = OPS[node.func].outputs if isinstance(node, Call) and node.func in OPS else 1
        if unpack > 1 and outputs == 1:
            raise self.fail(f"{unpack} names are given but this expression has one value; only "
                            "a multi-output op such as zero_out(x) can be unpacked", node)
        if outputs > 1 and unpack != outputs:
            raise self.fail(f"{node.func} has {outputs} outputs but {unpack} name"
                            f"{'s are' if unpack != 1 else ' is'} given", node,
                            f"unpack it in a let: \"a, b\": {node.func}(...)")
        self.tensor(node, top=True)

    # ----- tensor positions -----
    def tensor(self, node: Node, top: bool = False) -> None:
        if isinstance(node, Const):
            if node.value is None:
                raise self.fail("none is not a value here", node)
            if isinstance(node.value, str):
                if node.value in DTYPES:
                    raise self.fail(f"{node.value!r} is a dtype; it can only be cast's dtype",
                                    node)
                raise self.fail("a string is not a tensor", node)
        elif isinstance(node, Name):
            self.name(node)
        elif isinstance(node, ListExpr):
            if not self.constant_list(node):
                raise self.fail("a list of expressions is only allowed as the first argument of "
                                "concat or stack", node, "write stack([a, b]) or concat([a, b])")
        elif isinstance(node, Call):
            self.call(node, top)
        else:
            raise self.fail("a slice is only allowed inside an index x[...]", node)

    def constant_list(self, node: Node) -> bool:
        if isinstance(node, ListExpr):
            return all(self.constant_list(item) for item in node.items)
        return isinstance(node, Const) and type(node.value) in (int, float, bool)

    def name(self, node: Name) -> None:
        scope = self.scope
        if scope.has(node.id) or node.id in scope.attributes:
            return
        if node.id in scope.elsewhere:
            raise self.fail(scope.elsewhere[node.id], node)
        if node.id in OPS or node.id in scope.functions:
            raise self.fail(f"{node.id!r} is a function; call it, e.g. {node.id}(x)", node)
        known = sorted(scope.names | scope.attributes) + list(CONSTANT_NAMES)
        raise self.fail(f"undefined name {node.id!r}", node,
                        did_you_mean(node.id, known) or scope.hint)

    def known_calls(self) -> set[str]:
        """What a misspelt function more likely means, as override_map's op types prefer the
        ops the spec calls: the spec's own functions, and the ops this expression calls."""
        calls = {n.func for n in walk(self.root) if isinstance(n, Call)} if self.root else set()
        return {*self.scope.functions, *(c for c in calls if c in OPS)}

    def call(self, node: Call, top: bool) -> None:
        if node.func == GRAD and node.func not in self.scope.functions:
            self.grad(node)
            return
        if node.func in self.scope.functions:
            params = self.scope.functions[node.func]
            bound = self.bind(node, params, (), f"{node.func}({', '.join(params)})")
            for value in bound.values():
                self.tensor(value)
            return
        spec = OPS.get(node.func)
        if spec is None:
            if node.func in self.scope.elsewhere:
                raise self.fail(self.scope.elsewhere[node.func], node)
            if self.scope.has(node.func):
                raise self.fail(f"{node.func!r} is a tensor, not a function", node)
            raise self.fail(f"unknown function {node.func!r}", node,
                            did_you_mean(node.func, [*OPS, *self.scope.functions, GRAD],
                                         prefer=self.known_calls(), alias=tf_alias(node.func)))
        if spec.outputs > 1 and not top:
            raise self.fail(f"{node.func} has {spec.outputs} outputs, so it cannot be used inside "
                            "a larger expression", node,
                            f"unpack it in a let: \"a, b\": {node.func}(...)")
        if node.func == "dtype":
            raise self.fail("dtype(x) gives a dtype, usable only as cast's dtype", node,
                            "write cast(y, dtype(x))")
        if node.func == "getitem":
            self.getitem(node)
            return
        bound = self.bind(node, spec.params, spec.defaults, spec.signature)
        for param, value in bound.items():
            if spec.variadic and param == spec.params[0]:
                self.tensor_list(node, value)
            elif param in spec.tensor_params:
                self.tensor(value)
            else:
                self.attribute(node.func, param, value)

    def grad(self, node: Call) -> None:
        """grad(y, x): y any float tensor expression, x the name of an input or a let."""
        if not self.scope.grads:
            raise self.fail("grad(y, x) can only be used in the spec's let and outputs", node,
                            "compute the gradient in a let and pass it in as an argument")
        bound = self.bind(node, GRAD_PARAMS, (), GRAD_SIGNATURE)
        self.tensor(bound["y"])
        x = bound["x"]
        if not isinstance(x, Name):
            raise self.fail(f"grad's x must be the name of an input or a let, got {_show(x)}", x,
                            "name the tensor in a let: let: {h: ...}, then grad(y, h)")
        self.name(x)

    def bind(self, node: Call, params, defaults, signature: str) -> dict[str, Node]:
        """Match arguments to parameters, as Python would; every mistake is an error."""
        if len(node.args) > len(params):
            raise self.fail(f"{signature} takes at most {len(params)} argument"
                            f"{'s' if len(params) != 1 else ''}, got {len(node.args)}",
                            node.args[len(params)])
        bound = dict(zip(params, node.args))
        for key, value in node.kwargs:
            if key not in params:
                raise self.fail(f"{node.func}() has no parameter {key!r}; its signature is "
                                f"{signature}", value, did_you_mean(key, params))
            if key in bound:
                raise self.fail(f"{node.func}() got {key!r} both by position and by keyword",
                                value)
            bound[key] = value
        missing = [p for p in params if p not in bound and p not in defaults]
        if missing:
            raise self.fail(f"{signature} is missing the argument {missing[0]!r}", node)
        return bound

    def tensor_list(self, call: Call, value: Node) -> None:
        if not isinstance(value, ListExpr) or not value.items:
            raise self.fail(f"{call.func} takes a list of tensors first, e.g. {call.func}([a, b])",
                            value)
        for item in value.items:
            self.tensor(item)

    # ----- attribute positions -----
    def attribute(self, func: str, param: str, value: Node) -> None:
        if isinstance(value, Name) and value.id in self.scope.attributes:
            return  # a registered gradient passes its op's attribute through
        if param == "wrt":
            if isinstance(value, Name):
                self.name(value)
            elif not (isinstance(value, Const) and value.value is None):
                raise self.fail(f"{func}'s wrt must be the name of an input or a let", value)
            return
        if param == "dtype":
            if isinstance(value, Call) and value.func == "dtype":
                bound = self.bind(value, OPS["dtype"].params, {}, OPS["dtype"].signature)
                self.tensor(bound["x"])
            elif not (isinstance(value, Const) and value.value in DTYPES):
                raise self.fail(f"{func}'s dtype must be one of {', '.join(DTYPES)} or dtype(x), "
                                f"got {_show(value)}", value)
            return
        test, what = _ATTRIBUTE_RULES.get(param, _NUMBER_RULE)
        if not test(value):
            raise self.fail(f"{func}'s {param} must be {what} (a constant), got {_show(value)}",
                            value)

    # ----- indexing -----
    def getitem(self, node: Call) -> None:
        if (len(node.args) != 1 or len(node.kwargs) != 1 or node.kwargs[0][0] != "index"
                or not isinstance(node.kwargs[0][1], IndexExpr)):
            raise self.fail("getitem is not called directly; index with x[...]", node)
        self.tensor(node.args[0])
        for item in node.kwargs[0][1].items:
            self.index_item(item)

    def index_item(self, item: Node) -> None:
        if isinstance(item, SliceExpr):
            for part in (item.start, item.stop, item.step):
                if part is not None:
                    self.index_scalar(part)
        elif isinstance(item, ListExpr):
            if not item.items or not _int_list(item):
                raise self.fail("a list inside an index must hold integer constants", item)
        elif isinstance(item, Const) and item.value is None:
            return
        else:
            self.index_scalar(item)

    def index_scalar(self, item: Node) -> None:
        if isinstance(item, Const) and type(item.value) is not int:
            raise self.fail(f"an index must be an integer, a slice, None or a list of "
                            f"integers, got {_show(item)}", item)
        self.tensor(item)
