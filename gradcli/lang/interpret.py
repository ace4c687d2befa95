"""Evaluate a spec's expressions over one backend's op table.

The interpreter knows the expression language (lists, indexing, dtype names,
functions, grad_pass_through, override scopes); a backend supplies tensors,
ops and gradient control through the small `Builder` interface below.
"""
from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable, Mapping, Protocol

from ..errors import SpecError
from ..ops import OPS
from . import ast
from .checks import GRAD
from .deps import Dependencies
from .places import Place


class Builder(Protocol):
    """What a backend gives the interpreter."""

    ops: Mapping[str, Callable]

    def constant(self, value) -> Any: ...
    def is_tensor(self, value) -> bool: ...
    def is_float(self, value) -> bool: ...
    def dtype_name(self, value) -> str: ...
    def to_index(self, value) -> Any: ...
    def override_scope(self, entries) -> Any: ...
    def call_function(self, spec, args: list, evaluate: Callable) -> Any: ...
    def pass_through(self, fn: Callable, x) -> Any: ...
    def bind(self, names: tuple, value, env: Mapping) -> Any:
        """Called as each let and output is bound: a backend may swap in stopped copies."""
    def origin(self, place) -> Any:
        """A context manager: ops built inside come from `place` (a spec sub-expression)."""
    def grad(self, y_at: Callable, x) -> Any:
        """grad(y, x): the gradient of sum(y) with respect to x, itself differentiable.
        y_at() builds y from the env as it stands; y_at(x2) builds it again from x2 (lets
        between x and y included), for a framework that must see y computed from x."""
    def checkpoint(self) -> Any:
        """Where the build is now (e.g. how many random draws were made), for a rebuild."""
    def rebuilding(self, mark) -> Any:
        """A context manager: ops built inside repeat those built after `mark` (same draws)."""


def matmul_misfit(a: tuple, b: tuple, name_a: str, name_b: str) -> str | None:
    """Which shapes of matmul(a, b) do not fit, in the spec's terms, or None: every backend
    words this differently (numpy by its gufunc signature), none of them for a spec's author.
    Batch axes that do not broadcast are left to the backend's own broadcasting message."""
    if not a or not b:  # numpy, torch and TensorFlow refuse a scalar, each in its own words
        scalar, shape = (name_a, a) if not a else (name_b, b)
        return (f"{scalar} is a scalar (shape {shape}); matmul(a, b) needs a and b with at "
                "least one axis each (multiply a scalar with *)")
    inner = b[0] if len(b) == 1 else b[-2]
    if a[-1] == inner:
        return None
    axis = "only axis" if len(b) == 1 else "first axis" if len(b) == 2 else "second-to-last axis"
    return (f"the shapes {a} and {b} do not fit: {name_a}'s last axis has {a[-1]} elements but "
            f"{name_b}'s {axis} has {inner}; matmul(a, b) needs a's last "
            "axis as long as b's first (b with one or two axes) or second-to-last axis")


def broadcast_misfit(a: tuple, b: tuple, name_a: str, name_b: str) -> str | None:
    """Which axes of an elementwise op's two operands do not broadcast, in the spec's terms,
    or None: numpy, torch, jax and TensorFlow each word it their own way (numpy's "operands
    could not be broadcast together with shapes (3,) (2,) ")."""
    for k in range(1, min(len(a), len(b)) + 1):
        m, n = a[-k], b[-k]
        if m != n and m != 1 and n != 1:
            where_a = "last axis" if k == 1 else f"axis {len(a) - k}"
            where_b = "last axis" if k == 1 else f"axis {len(b) - k}"
            return (f"the shapes {a} and {b} do not broadcast: {name_a}'s {where_a} has {m} "
                    f"elements but {name_b}'s {where_b} has {n}; an elementwise op pairs the "
                    "axes from the last, and the two lengths of each pair must be equal or one "
                    "of them 1")
    return None


def _literal_shape(value) -> tuple:
    """The shape of a bare number (()) or a list literal, as its tensor will have it."""
    shape = []
    while isinstance(value, (list, tuple)):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def spec_error(expr, message: str, node=None) -> SpecError:
    """A SpecError pointing into the expression's source (file, line, column)."""
    loc = expr.loc
    column = loc.column + (node.pos if node is not None and expr.text else 0)
    if loc.line == 0:  # a --set value: its flag and key, and where in it (there is no line)
        return SpecError(message.rstrip() + (loc.in_value(column) if node is not None else ""),
                         key=loc.path)
    return SpecError(message, path=loc.path, line=loc.line, column=column,
                     source_line=loc.source_line)


class Interpreter:
    """Evaluates Expr nodes of one experiment with one builder."""

    def __init__(self, experiment, builder: Builder) -> None:
        self.experiment = experiment
        self.builder = builder
        self.ast, self.place = ast, Place
        self.grad_name = GRAD
        # For grad(y, x): where each let sits, what it depends on, where its build began.
        upstream = Dependencies()
        for let in experiment.lets:
            upstream.add(let.names, let.expr.node)
        self.upstream = upstream
        self.downstream: dict[str, set[str]] = {}  # x -> the lets built from it, when asked
        self.let_index = {n: i for i, let in enumerate(experiment.lets) for n in let.names}
        self.marks: list = []
        self.current = 0  # the let being built (len(lets) while the outputs are)

    def build(self, leaves: dict) -> dict:
        """Every let and output, in order, with override_map entries in force where scoped."""
        exp, env = self.experiment, dict(leaves)
        global_entries = [e for e in exp.override_map if e.scope is None]
        with self.builder.override_scope(global_entries) if global_entries else ExitStack():
            for i, let in enumerate(exp.lets):
                self.current = i
                self.marks.append(self.builder.checkpoint())
                self._let(let, env)
            self.current = len(exp.lets)
            for out in exp.outputs:
                env[out.name] = self._scoped((out.name,), out.expr, env, output=True)
        return env

    def _let(self, let, env) -> None:
        value = self._scoped(let.names, let.expr, env)
        if len(let.names) > 1:
            value = tuple(value)
            if len(value) != len(let.names):
                raise spec_error(let.expr, f"gives {len(value)} values for "
                                           f"{len(let.names)} names")
            env.update(zip(let.names, value))
        else:
            env[let.names[0]] = value

    def _scoped(self, names, expr, env, output: bool = False):
        entries = [e for e in self.experiment.override_map
                   if e.scope is not None and set(e.scope) & set(names)]
        with self.builder.override_scope(entries) if entries else ExitStack():
            value = self.evaluate(expr, env)
        if output and isinstance(value, (bool, int, float)):
            # an output is what gets a value and gradients on every backend: a bare number
            # (`y: 1.0`, or a let that holds one) is a constant tensor, connected to no input
            value = self.builder.constant(value)
        return self.builder.bind(names, value, env)

    def evaluate(self, expr, env: Mapping) -> Any:
        return self._eval(expr.node, expr, env)

    # ----- nodes -----
    def _eval(self, node, expr, env):
        ast = self.ast
        if isinstance(node, ast.Const):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise spec_error(expr, f"name {node.id!r} is not defined here", node)
            return env[node.id]
        if isinstance(node, ast.ListExpr):
            items = [self._eval(i, expr, env) for i in node.items]
            if any(self.builder.is_tensor(i) for i in items):
                return self._apply("stack", node, expr, self._listed(items))
            return items
        if isinstance(node, ast.Call):
            return self._call(node, expr, env)
        raise spec_error(expr, f"{type(node).__name__} cannot stand here", node)

    def _listed(self, items: list) -> list:
        """A list of concat or stack: bare numbers beside a number tensor stay numbers, so that
        the op gives them its dtype, as TensorFlow does (stack([k, 1]) is int64; a float
        number there is refused, ops.table.float_number); beside none, the spec's dtype."""
        if any(self.builder.is_tensor(i) and self.builder.dtype_name(i) != "bool" for i in items):
            return items
        return [self._tensor(i) for i in items]

    def _tensor(self, value):
        return value if self.builder.is_tensor(value) else self.builder.constant(value)

    def _call(self, node, expr, env):
        name = node.func
        if name in self.experiment.functions:
            args = [self._tensor(self._eval(a, expr, env)) for a in node.args]
            return self._at(name, node, expr, self.builder.call_function,
                            self.experiment.functions[name], args, self.evaluate)
        if name == "grad_pass_through":
            return self._pass_through(node, expr, env)
        if name == self.grad_name:
            return self._grad(node, expr, env)
        kwargs = {k: v for k, v in node.kwargs}
        if name == "getitem":
            target = self._eval(node.args[0], expr, env)
            return self._apply("getitem", node, expr, self._tensor(target),
                               self._index(kwargs["index"], expr, env))
        spec = OPS[name]
        if spec.variadic:  # concat, stack: their list literal is a list of tensors, not one tensor
            args, kwargs = self._variadic_args(spec, node, kwargs, expr, env)
            return self._apply(name, node, expr, *args, **kwargs)
        args = [self._eval(a, expr, env) for a in node.args]
        kwargs = {k: self._eval(v, expr, env) for k, v in kwargs.items()}
        if name == "dtype":
            return self.builder.dtype_name(self._tensor(args[0]))
        self._constants_for_tensor_params(spec, args)
        return self._apply(name, node, expr, *args, **kwargs)

    def _variadic_args(self, spec, node, kwargs: dict, expr, env) -> tuple[list, dict]:
        listed = spec.params[0]
        nodes = list(node.args)
        values = nodes.pop(0) if nodes else kwargs.pop(listed)
        if isinstance(values, self.ast.ListExpr):
            items = [self._eval(i, expr, env) for i in values.items]
        else:  # one tensor: a list of one, as tf.concat takes it
            items = [self._eval(values, expr, env)]
        args = [self._listed(items)] + [self._eval(a, expr, env) for a in nodes]
        return args, {k: self._eval(v, expr, env) for k, v in kwargs.items()}

    def _apply(self, name, node, expr, *args, **kwargs):
        spec = OPS.get(name)
        if (spec is not None and spec.family == "binary" and len(args) == 2
                and any(map(self.builder.is_tensor, args))):
            operands = [a.id if isinstance(a, self.ast.Name) else which
                        for a, which in zip(node.args, ("the first operand", "the second operand"))]
            shapes = [self.builder.shape(a) if self.builder.is_tensor(a) else _literal_shape(a)
                      for a in args]
            misfit = (matmul_misfit if name == "matmul" else broadcast_misfit)(*shapes, *operands)
            if misfit:
                raise spec_error(expr, f"{name}() failed: {misfit}", node)
        return self._at(name, node, expr, self.builder.ops[name], *args, **kwargs)

    def _at(self, name, node, expr, build, *args, **kwargs):
        """build(*args, **kwargs), its ops marked as coming from this sub-expression; its
        failure (any error but a SpecError, which already points into the spec) points here."""
        place = self.place(expr, node)
        try:
            with self.builder.origin(place):
                return build(*args, **kwargs)
        except SpecError:
            raise
        except MemoryError:  # numpy's message is only the shape; say what happened
            raise spec_error(expr, f"{name}() ran out of memory; make the tensors smaller or "
                                   "lower --max-memory (see docs/untrusted.md)", node) from None
        except Exception as exc:  # a backend's own error, worded for the spec's author
            message = getattr(exc, "args", [str(exc)])[0] if getattr(exc, "args", None) else str(exc)
            raise spec_error(expr, f"{name}() failed: {message}", node) from None

    def _constants_for_tensor_params(self, spec, args: list) -> None:
        # Bare numbers take the spec's dtype, unless a tensor beside them sets it. A boolean
        # does not (`where(c, 1.0, 0.0)` is the spec's dtype, as tf.where gives TF's float32
        # default): so every backend's numbers agree, the core's default float64 never shows.
        positions = [i for i, p in enumerate(spec.params[:len(args)]) if p in spec.tensor_params]
        tensors = [args[i] for i in positions if self.builder.is_tensor(args[i])]
        if any(self.builder.dtype_name(t) != "bool" for t in tensors):
            return
        numbers = [i for i in positions if not self.builder.is_tensor(args[i])]
        if numbers:
            args[numbers[0]] = self.builder.constant(args[numbers[0]])

    def _index(self, index_node, expr, env):
        ast, items = self.ast, []
        for item in index_node.items:
            if isinstance(item, ast.SliceExpr):
                parts = [None if p is None else self._slice_bound(p, expr, env)
                         for p in (item.start, item.stop, item.step)]
                items.append(slice(*parts))
            else:
                value = self._eval(item, expr, env)
                items.append(value if value is None else self._scalar(value))
        return tuple(items)

    def _slice_bound(self, node, expr, env) -> int:
        value = self._scalar(self._eval(node, expr, env))
        if isinstance(value, float) and value.is_integer():
            return int(value)  # a whole float, e.g. computed from a float tensor
        if isinstance(value, bool) or not isinstance(value, int):
            shown = f"{len(value)} values" if isinstance(value, list) else repr(value)
            raise spec_error(expr, f"a slice bound must be one integer, got {shown}", node)
        return value

    def _scalar(self, value):
        return self.builder.to_index(value) if self.builder.is_tensor(value) else value

    def _pass_through(self, node, expr, env):
        target = dict(node.kwargs).get("wrt") or (node.args[1] if len(node.args) > 1 else None)
        body = node.args[0]
        if target is None:
            names = sorted({n for n in _names_in(body, self.ast)
                            if n in env and self.builder.is_tensor(env[n])
                            and self.builder.is_float(env[n])})
            if len(names) != 1:
                raise spec_error(expr, "grad_pass_through(e) passes the gradient to the one float "
                                       f"name e uses, but e uses {names or 'none'}; say which with "
                                       "grad_pass_through(e, wrt=NAME)", node)
            wrt = names[0]
        elif isinstance(target, self.ast.Name):
            wrt = target.id
        else:
            raise spec_error(expr, "grad_pass_through(e, wrt=NAME) takes a name for wrt", node)
        if wrt not in env:
            raise spec_error(expr, f"name {wrt!r} is not defined here", node)

        def forward(x):
            return self._eval(body, expr, {**env, wrt: x})

        return self._at("grad_pass_through", node, expr, self.builder.pass_through, forward, env[wrt])

    # ----- grad(y, x) -----
    def _grad(self, node, expr, env):
        bound = {**dict(zip(("y", "x"), node.args)), **dict(node.kwargs)}
        y_node, x_node = bound["y"], bound["x"]
        x = x_node.id
        if x not in env:
            raise spec_error(expr, f"name {x!r} is not defined here", x_node)
        xv = env[x]
        if not (self.builder.is_tensor(xv) and self.builder.is_float(xv)):
            shown = self.builder.dtype_name(xv) if self.builder.is_tensor(xv) else "a constant"
            raise spec_error(expr, f"grad(y, x): {x!r} is {shown}; a gradient is taken with "
                                   "respect to a float tensor", x_node)

        def y_at(x_new=None):
            scope = env if x_new is None else self._rebuilt(env, x, x_new)
            y = self._tensor(self._eval(y_node, expr, scope))
            if not self.builder.is_float(y):
                raise spec_error(expr, f"grad(y, x): y is {self.builder.dtype_name(y)}; only a "
                                       "float y has a gradient (cast it first)", y_node)
            return y

        return self._at(self.grad_name, node, expr, self.builder.grad, y_at, xv)

    def _rebuilt(self, env, x: str, x_new) -> dict:
        """The env with x replaced by x_new and every let after x that depends on it built
        again from x_new (with the random draws it made the first time)."""
        lets, current = self.experiment.lets, self.current
        rebuilt = dict(env)
        rebuilt[x] = x_new
        try:
            if x not in self.downstream:
                self.downstream[x] = self.upstream.downstream(x)
            built_from_x = self.downstream[x]
            for j in range(self.let_index.get(x, -1) + 1, current):
                if lets[j].names[0] in built_from_x:
                    self.current = j  # a grad() inside let j rebuilds only what precedes it
                    with self.builder.rebuilding(self.marks[j]):
                        self._let(lets[j], rebuilt)
        finally:
            self.current = current
        return rebuilt


def _names_in(node, ast) -> set[str]:
    found, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Call):
            stack.extend(n.args)
            stack.extend(v for _, v in n.kwargs)
        elif isinstance(n, ast.ListExpr):
            stack.extend(n.items)
        elif isinstance(n, getattr(ast, "IndexExpr", ())):
            stack.extend(n.items)
        elif isinstance(n, ast.SliceExpr):
            stack.extend(p for p in (n.start, n.stop, n.step) if p is not None)
    return found
