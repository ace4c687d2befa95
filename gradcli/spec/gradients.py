"""Build the gradient-altering sections: functions, register and override_map.

A registered gradient is checked against every op type override_map sends to
it: one gradient per op input, and only inputs, outputs and attributes that
op really has.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from gradcli.lang.ast import Name, walk
from gradcli.lang.checks import Scope
from gradcli.ops import BUILTIN_GRADIENTS, OPS, op_key, tf_alias
from gradcli.spec.document import Map, Scalar, Seq, YNode
from gradcli.spec.fields import (
    check_keys,
    describe,
    did_you_mean,
    expect_map,
    expect_names,
    expect_str,
    fail,
    is_identifier,
    optional,
    sub,
)
from gradcli.spec.model import Expr, FunctionSpec, GradientSpec, OverrideEntry
from gradcli.spec.names import Names, check_new_name
from gradcli.spec.sections import FUNCTION, OVERRIDE_ENTRY
from gradcli.spec.sites import Site, check_at, error_at, parse_at

ATTRIBUTE_NAMES = frozenset(p for spec in OPS.values() for p in spec.params
                            if p not in spec.tensor_params)
_NUMBERED = re.compile(r"(x|y|dy)([0-9]+)")
_REGISTER_SEES = ("a registered gradient sees x, x0, x1.. (the op's inputs), y, y0.. (its "
                  "outputs), dy, dy0.. (their upstream gradients) and the op's attributes")


_OP_BY_KEY = {op_key(op): op for op in OPS}
# Calls the interpreter evaluates itself, which build no op of their own type, so an
# override_map entry naming one would match nothing on any backend: refused at its place.
# grad_pass_through wraps its expression in a custom gradient, as tf.grad_pass_through (a
# tf.custom_gradient) does, and TensorFlow has no such op type either; dtype(x) is a name.
_NOT_OP_TYPES = frozenset(name for name, spec in OPS.items() if spec.interpreted)


def gradient_list(node: YNode | None, key: str, count: int | None, owner: str,
                  scope: Scope) -> list[Site | None]:
    """One expression, or a list with none entries; `count` entries when it is known."""
    if isinstance(node, Seq):
        if count is not None and len(node.items) != count:
            raise fail(node, key, f"expected {count} gradient{'s' * (count != 1)} (one per "
                                  f"argument of {owner}), got {len(node.items)}")
        if not node.items:
            raise fail(node, key, "expected at least one gradient, got an empty list")
        return [None if _is_none(item) else _checked(item, sub(key, i), scope)
                for i, item in enumerate(node.items)]
    if not isinstance(node, Scalar) or node.kind == "null":
        raise fail(node, key, f"expected a gradient expression or a list of them, got "
                              f"{describe(node)}")
    if count is not None and count != 1:
        raise fail(node, key, f"{owner} has {count} arguments, so its gradient must be a list "
                              f"of {count} expressions", "write none where an argument gets no "
                                                         "gradient")
    return [None if _is_none(node) else _checked(node, key, scope)]


def _is_none(node: YNode) -> bool:
    return isinstance(node, Scalar) and (node.kind == "null" or node.text.strip() in
                                         ("none", "None"))


def _checked(node: YNode, key: str, scope: Scope) -> Site:
    site = parse_at(node, key)
    check_at(site, scope)
    return site


def _exprs(sites: list[Site | None]) -> tuple[Expr | None, ...]:
    return tuple(None if s is None else s.expr for s in sites)


def build_functions(node: Map | None, spec_names: list[str]) -> dict[str, FunctionSpec]:
    """The `functions` section; a body sees only its args (and dy in the gradient)."""
    out: dict[str, FunctionSpec] = {}
    if node is None:
        return out
    order = {fname: i for i, fname in enumerate(node.items)}
    earlier = _Args(out)  # only functions above the one being checked are in `out` yet
    outside = frozenset(spec_names)
    for fname, (key_node, value) in node.items.items():
        key = sub("functions", fname)
        body = expect_map(value, key, "a mapping with args, forward and gradient")
        check_keys(body, key, FUNCTION, named=key_node.mark)
        args: list[str] = []
        for arg, arg_node in expect_names(body.get("args"), sub(key, "args")):
            check_new_name(arg, arg_node, sub(key, "args"), "argument name")
            if arg in args:
                raise fail(arg_node, sub(key, "args"), f"argument {arg!r} is listed twice")
            if arg == "dy" or _NUMBERED.fullmatch(arg) and arg.startswith("dy"):
                raise fail(arg_node, sub(key, "args"), f"{arg!r} is the upstream gradient inside "
                                                       "gradient; pick another argument name")
            args.append(arg)
        elsewhere = _FunctionReach(fname, args, outside, order)
        lets = _function_lets(optional(body, "let"), sub(key, "let"), args, earlier, elsewhere,
                              order)
        local = frozenset(args) | {name for name, _ in lets}
        shown = ", ".join([*args, *(name for name, _ in lets)])
        what = "args and its lets" if lets else "args"
        forward = _checked(body.get("forward"), sub(key, "forward"),
                           Scope(local, earlier, elsewhere=elsewhere,
                                 hint=f"forward sees only the {what}: {shown}"))
        grad_scope = Scope(local | {"dy"}, earlier, numbered=("dy",), elsewhere=elsewhere,
                           hint=f"gradient sees the {what} ({shown}) and dy")
        grads = gradient_list(body.get("gradient"), sub(key, "gradient"), len(args),
                              f"function {fname!r}", grad_scope)
        out[fname] = FunctionSpec(fname, tuple(args), forward.expr, _exprs(grads),
                                  key_node.mark.location(), lets)
    return out


def _function_lets(node: YNode | None, key: str, args: list[str], earlier, elsewhere,
                   functions: dict):
    """A function's own `let:` (name -> expression, in order): each sees the args and the lets
    above it, as a tf.custom_gradient closure sees the forward's intermediates."""
    if node is None:
        return ()
    section = expect_map(node, key, "a mapping of names to expressions")
    lets: list[tuple[str, Expr]] = []
    for name, (name_node, value) in section.items.items():
        check_new_name(name, name_node, sub(key, name), "let name")
        if name in args:
            raise fail(name_node, sub(key, name), f"{name!r} is an argument of the function; "
                                                  "pick another name")
        if name == "dy" or _NUMBERED.fullmatch(name) and name.startswith("dy"):
            raise fail(name_node, sub(key, name), f"{name!r} is the upstream gradient inside "
                                                  "gradient; pick another name")
        if name in functions:
            raise fail(name_node, sub(key, name), f"{name!r} names a function; pick another name")
        visible = frozenset(args) | {n for n, _ in lets}
        site = _checked(value, sub(key, name),
                        Scope(visible, earlier, elsewhere=elsewhere,
                              hint=f"a function's let sees its args and earlier lets: "
                                   f"{', '.join(sorted(visible))}"))
        lets.append((name, site.expr))
    return tuple(lets)


class _Args(Mapping):
    """function name -> its args, over the FunctionSpecs built so far (a view, not a copy)."""

    def __init__(self, specs: dict[str, FunctionSpec]) -> None:
        self.specs = specs

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self.specs[name].args

    def __iter__(self):
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


class _FunctionReach(Mapping):
    """Why a spec name or function is out of a function body's reach, computed when asked.

    Built per function, so it must not copy every spec name: that made loading
    quadratic in the number of functions.
    """

    def __init__(self, fname: str, args: list[str], outside: frozenset, order: dict) -> None:
        self.fname, self.args, self.outside, self.order = fname, args, outside, order

    def __getitem__(self, name: str) -> str:
        if name == self.fname:
            return f"function {name!r} cannot call itself"
        if self.order.get(name, -1) > self.order[self.fname]:
            return (f"{name!r} is defined after {self.fname!r}; a function can only call "
                    "functions defined above it")
        if name in self.outside:
            return (f"a function sees only its args ({', '.join(self.args)}); pass {name!r} as "
                    "an argument")
        raise KeyError(name)

    def __iter__(self):
        return (n for n in [*self.outside, *self.order] if n in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def build_register(node: Map | None, functions: dict[str, FunctionSpec], spec_names: list[str],
                   ) -> tuple[dict[str, GradientSpec], dict[str, list[Site | None]]]:
    """The `register` section, with each gradient's sites kept for the override checks."""
    specs: dict[str, GradientSpec] = {}
    sites: dict[str, list[Site | None]] = {}
    if node is None:
        return specs, sites
    builtins = {b.lower(): b for b in BUILTIN_GRADIENTS}
    elsewhere = {n: f"{n!r} is not visible here: {_REGISTER_SEES}" for n in spec_names}
    scope = Scope(frozenset({"x", "y", "dy"}), {n: f.args for n, f in functions.items()},
                  numbered=("x", "y", "dy"), attributes=ATTRIBUTE_NAMES, elsewhere=elsewhere,
                  hint=_REGISTER_SEES)
    for gname, (key_node, value) in node.items.items():
        key = sub("register", gname)
        if not is_identifier(gname):
            raise fail(key_node, key, f"{gname!r} is not a valid gradient name")
        if gname.lower() in builtins:
            raise fail(key_node, key, f"{builtins[gname.lower()]!r} is a built-in gradient; "
                                      "pick another name")
        if op_key(gname) in _OP_BY_KEY:
            raise fail(key_node, key, f"{gname!r} is an op name; pick another name")
        sites[gname] = gradient_list(value, key, None, f"gradient {gname!r}", scope)
        specs[gname] = GradientSpec(gname, _exprs(sites[gname]), key_node.mark.location())
    return specs, sites


def build_override_map(node: YNode | None, names: Names, register: dict[str, list[Site | None]],
                       used: frozenset[str] = frozenset()) -> tuple[OverrideEntry, ...]:
    """The `override_map` section: a mapping {op type: gradient} or a list of scoped entries.
    `used`: the ops the spec's expressions call, which a misspelt op type more likely means."""
    if node is None:
        return ()
    found: list[tuple[OverrideEntry, str, YNode]] = []
    if isinstance(node, Map):
        for op_text, (key_node, value) in node.items.items():
            key = sub("override_map", op_text)
            op = _resolve_op(op_text, key_node, key, used)
            gradient = _resolve_gradient(value, key, register)
            found.append((OverrideEntry(op, gradient, None, key_node.mark.location()), key,
                          key_node))
    elif isinstance(node, Seq):
        for i, item in enumerate(node.items):
            key = sub("override_map", i)
            entry = expect_map(item, key, "a mapping {op, gradient, scope}")
            check_keys(entry, key, OVERRIDE_ENTRY)
            op_node = entry.get("op")
            op = _resolve_op(expect_str(op_node, sub(key, "op"), "an op type"), op_node,
                             sub(key, "op"), used)
            gradient = _resolve_gradient(entry.get("gradient"), sub(key, "gradient"), register)
            found.append((OverrideEntry(op, gradient, _scope(entry, key, names), entry.mark
                                        .location()), key, entry))
    else:
        raise fail(node, "override_map", f"expected a mapping {{op type: gradient}} or a list of "
                                         f"{{op, gradient, scope}}, got {describe(node)}")
    _refuse_overlaps(found)
    for entry, key, at in found:
        if entry.gradient in register:
            _check_fits(entry, register[entry.gradient], key, at)
    return tuple(entry for entry, _, _ in found)


def _resolve_op(text: str, node: YNode, key: str, used=frozenset()) -> str:
    op = _OP_BY_KEY.get(op_key(text))
    if op is None:
        raise fail(node, key, f"unknown op type {text!r}",
                   did_you_mean(text.lower(), [o for o in OPS if o not in _NOT_OP_TYPES],
                                prefer=used, alias=tf_alias(text)))
    if op in _NOT_OP_TYPES:
        raise _not_an_op_type(text, op, node, key)
    return op


def _not_an_op_type(text: str, op: str, node: YNode, key: str):
    if OPS[op].result == "dtype":
        return fail(node, key, f"{text!r} is not an op type: {OPS[op].signature} builds no op, "
                               "it gives a dtype name, so no gradient passes through it")
    return fail(node, key, f"{text!r} is not an op type: {OPS[op].signature} wraps its "
                           "expression in a custom gradient, as tf.grad_pass_through (a "
                           "tf.custom_gradient) does, so no op of that type is built, on any "
                           "backend or in TensorFlow, and the entry would match no op",
                "its gradient is dy into wrt by definition; for another, write a function "
                "with a gradient of its own under functions:")


def _resolve_gradient(node: YNode | None, key: str, register) -> str:
    name = expect_str(node, key, "a gradient name")
    if name in register or name in BUILTIN_GRADIENTS:
        return name
    raise fail(node, key, f"unknown gradient {name!r}: register it under register, or use a "
                          f"built-in ({', '.join(BUILTIN_GRADIENTS)})",
               did_you_mean(name, [*register, *BUILTIN_GRADIENTS]))


def _scope(entry: Map, key: str, names: Names) -> tuple[str, ...] | None:
    scope_node = optional(entry, "scope")
    if scope_node is None:
        return None
    scope: list[str] = []
    for name, name_node in expect_names(scope_node, sub(key, "scope")):
        names.require(name, name_node, sub(key, "scope"), ("input", "let", "output"),
                      "an input, let or output")
        if name in scope:
            raise fail(name_node, sub(key, "scope"), f"{name!r} is listed twice")
        scope.append(name)
    if not scope:
        raise fail(scope_node, sub(key, "scope"), "the scope is empty; leave scope out for an "
                                                  "override of every op")
    return tuple(scope)


def _refuse_overlaps(found) -> None:
    """Two entries may not both decide the gradient of the same op in the same place."""
    for i, (entry, key, at) in enumerate(found):
        for earlier, _, first in found[:i]:
            if earlier.op != entry.op:
                continue
            if entry.scope is None and earlier.scope is None:
                raise fail(at, key, f"op {entry.op!r} is overridden twice for every op (first "
                                    f"at line {first.mark.line})")
            shared = set(entry.scope or ()) & set(earlier.scope or ())
            if shared:
                raise fail(at, key, f"op {entry.op!r} is overridden twice within "
                                    f"{sorted(shared)[0]!r} (first at line {first.mark.line})")


def _check_fits(entry: OverrideEntry, sites: list[Site | None], key: str, at: YNode) -> None:
    """The registered gradient must match the op's inputs, outputs and attributes."""
    spec = OPS[entry.op]
    inputs = None if spec.variadic else len(spec.tensor_params)
    if inputs is not None and len(sites) != inputs:
        listed = ", ".join(spec.tensor_params) or "none"
        raise fail(at, key, f"gradient {entry.gradient!r} gives {len(sites)} gradient"
                            f"{'s' if len(sites) != 1 else ''} but op {entry.op!r} has {inputs} "
                            f"input{'s' if inputs != 1 else ''} ({listed})",
                   "write a list with one entry per input, none where an input gets no gradient")
    attributes = set(spec.params) - set(spec.tensor_params)
    for site in sites:
        if site is None:
            continue
        for node in walk(site.expr.node):
            if not isinstance(node, Name):
                continue
            numbered = _NUMBERED.fullmatch(node.id)
            if numbered:
                kind = "inputs" if numbered[1] == "x" else "outputs"
                limit = inputs if kind == "inputs" else spec.outputs
                if limit is not None and int(numbered[2]) >= limit:
                    noun = kind if limit != 1 else kind[:-1]
                    raise error_at(site.node, node.pos, site.key,
                                   f"{node.id!r} does not exist: override_map sends op "
                                   f"{entry.op!r} here, which has {limit} {noun}", None)
            elif node.id in ATTRIBUTE_NAMES and node.id not in attributes:
                raise error_at(site.node, node.pos, site.key,
                               f"op {entry.op!r} (from override_map) has no attribute "
                               f"{node.id!r}", f"its attributes: {', '.join(sorted(attributes))}"
                               if attributes else "it has no attributes")
