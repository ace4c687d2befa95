"""A framework's op map, derived from the op table.

Each op the frameworks implement gets its table spelling resolved in the framework's
namespaces (torch.<name>, jnp.<name>, tf.math.<name> unless the entry spells it
otherwise), or its formula run over the finished map, or, where the table says the
backend writes it itself, the backend's own function. Spellings are read with `ast`
and looked up with getattr: no spelling is ever evaluated. Nothing here imports a
framework; the backend passes its modules in.
"""
from __future__ import annotations

import ast
from typing import Callable, Mapping

from ..ops import OPS, OpSpec


def derive(framework: str, roots: Mapping[str, object], own: Mapping[str, Callable],
           adapters: Mapping[str, Callable[[Callable], Callable]] | None = None) -> dict:
    """{op name: forward(*tensors, **attributes)} for every op of the table a framework runs.

    roots names the modules a spelling may start from ({"torch": torch, "F": ...}); own holds
    exactly the ops whose entry spells them None for this framework; adapters wrap the
    spelled ops of a family (the framework's way with a reduction's axes, say).
    """
    adapters = adapters or {}
    expected = sorted(needs_own(framework))
    if sorted(own) != expected:
        raise LookupError(f"the {framework} backend writes {sorted(own)} itself, but the op table "
                          f"leaves exactly {expected} to it: change the table's spelling or the "
                          "backend's own ops so they agree")
    ops: dict[str, Callable] = {}
    namespace = _Namespace(ops)
    for spec in OPS.values():
        if not spec.native:
            continue
        spelling = spec.spelling(framework)
        if spec.name in own:
            ops[spec.name] = own[spec.name]
        elif spelling is None:
            ops[spec.name] = _formula(spec, namespace)
        else:
            resolved = _resolve(spelling, spec, roots, framework)
            adapt = adapters.get(spec.family)
            ops[spec.name] = adapt(resolved) if adapt is not None else resolved
    return ops


def needs_own(framework: str) -> set[str]:
    """The ops a framework's backend must write itself: spelled None and without a formula."""
    return {spec.name for spec in OPS.values() if spec.native and framework in spec.spellings
            and spec.spellings[framework] is None and spec.formula is None}


class _Namespace:
    """The op map as a formula's `o`: o.mul is the framework's mul."""

    __slots__ = ("_ops",)

    def __init__(self, ops: dict) -> None:
        self._ops = ops

    def __getattr__(self, name: str):
        return self._ops[name]


def _formula(spec: OpSpec, namespace: _Namespace) -> Callable:
    formula = spec.formula

    def run(*tensors, **attrs):
        return formula(namespace, *tensors, **attrs)
    run.__name__ = spec.name
    return run


def _resolve(spelling: str, spec: OpSpec, roots: Mapping[str, object], framework: str) -> Callable:
    """A dotted path ('tf.nn.elu') is the function itself, called with the tensors and the
    attributes by name; a call template ('F.elu(x, alpha=alpha)') binds the op's parameters."""
    where = f"op {spec.name!r}: {framework} spelling {spelling!r}"
    try:
        tree = ast.parse(spelling, mode="eval").body
    except SyntaxError as exc:
        raise LookupError(f"{where} does not parse: {exc.msg}") from None
    if not isinstance(tree, ast.Call):
        return _path(tree, roots, where)
    fn = _path(tree.func, roots, where)
    args = [_argument(a, spec, where) for a in tree.args]
    kwargs = {k.arg: _argument(k.value, spec, where) for k in tree.keywords}
    names = spec.tensor_params

    def call(*tensors, **attrs):
        values = dict(zip(names, tensors), **attrs)
        return fn(*[values[v] if is_param else v for is_param, v in args],
                  **{k: values[v] if is_param else v for k, (is_param, v) in kwargs.items()})
    call.__name__ = spec.name
    return call


def _path(node, roots: Mapping[str, object], where: str):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in roots:
        raise LookupError(f"{where}: a spelling starts from one of {sorted(roots)}")
    value = roots[node.id]
    for part in reversed(parts):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise LookupError(f"{where}: {type(value).__name__} {value!r} has no {part!r}") from None
    return value


def _argument(node, spec: OpSpec, where: str) -> tuple[bool, object]:
    """(True, parameter name) or (False, a literal constant)."""
    if isinstance(node, ast.Name) and node.id in spec.params:
        return True, node.id
    try:
        return False, ast.literal_eval(node)
    except ValueError:
        raise LookupError(f"{where}: an argument is one of the op's parameters "
                          f"{list(spec.params)} or a literal") from None
