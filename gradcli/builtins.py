"""The built-in named gradients (identity, hardtanh, reverse, zero) as the core's rules.

Each built-in is written once, as expression-language text in gradcli/ops (BUILTINS).
The eager backends evaluate that text with their own interpreter, as they evaluate a
spec's `register:` gradient (backends/eager.py `_rule`); this module does the same for
the bundled core, so that `gc.gradient_override_map({"Sign": "hardtanh"})` (the Python
API) and the numpy backend (which overrides through that API) use the same text.

Why a module here and not in core/control.py: the core knows nothing of the language
(docs/architecture), and the language knows nothing of the core, so the one piece that
knows both sits above them, like a backend does. The core registers every built-in under
its name at once (core/control.py, from the names in gradcli/ops), so the registry lists
them, override maps accept them and a user cannot take or remove their names; the first
time one runs, control.py asks this module for its rule, which parses the text and makes
the interpreter then: importing gradcli or its core imports no language.

The registry keeps op types and gradient names in one namespace, as TensorFlow's does
({"Sign": "Identity"} in TensorFlow means the Identity op's gradient): "identity" is both
the built-in named gradient and the identity op's own rule, and this text is its home.
"""
from __future__ import annotations

import functools

import numpy as np


def core_ops(dtype=np.float64) -> dict:
    """The table's ops as the core builds them (gc.exp, gc.sum, ...; not those the interpreter
    evaluates itself), by name: an interpreter builder's `ops`. The random draws and one_hot
    make tensors of `dtype`: the spec's float dtype for the numpy backend's builder, the core's
    own float64 for the built-in rules' (_CoreOps)."""
    from . import core as gc
    from .ops import OPS

    ops = {name: getattr(gc, name) for name, spec in OPS.items()
           if not spec.interpreted and not spec.composite}
    for name, spec in OPS.items():
        if spec.draw or name == "one_hot":
            ops[name] = functools.partial(ops[name], dtype=dtype)
        elif spec.composite:  # gc.clip_by_norm lives in core/clipping.py, loaded on first use
            ops[name] = functools.partial(_first_use, gc, name)
    return ops


def _first_use(gc, name: str, *args, **kwargs):
    return getattr(gc, name)(*args, **kwargs)


class _CoreOps:
    """The core as the interpreter's builder, for the few calls a rule's expression makes
    (the numpy backend's builder adds the spec's scopes, functions and seeds)."""

    def __init__(self) -> None:
        from . import core as gc

        self.gc = gc
        self.ops = core_ops()

    def constant(self, value):
        return self.gc.constant(np.asarray(value))

    def is_tensor(self, value) -> bool:
        return isinstance(value, self.gc.Tensor)

    def is_float(self, value) -> bool:
        return value.dtype.kind == "f"

    def shape(self, value) -> tuple:
        return tuple(value.shape)

    def dtype_name(self, value) -> str:
        return str(value.dtype)

    def to_index(self, value):
        return np.asarray(value.numpy()).tolist()


class _NoSpec:
    """An interpreter needs an experiment; a rule's expression reaches none of it."""

    lets: tuple = ()
    functions: dict = {}
    override_map: tuple = ()


_INTERPRETER = []  # made when a built-in first runs


def _interpreter():
    from .lang.interpret import Interpreter

    class Rules(Interpreter):
        def _at(self, name, node, expr, build, *args, **kwargs):
            # The core's errors as its other rules raise them (a GraphError of the budget,
            # say), not reworded as a spec's: a built-in's text has no spec to point into.
            return build(*args, **kwargs)

    return Rules(_NoSpec(), _CoreOps())


def _evaluate(name: str, op, dys):
    from .lang.rules import builtin, rule_names

    if not _INTERPRETER:
        _INTERPRETER.append(_interpreter())
    names = rule_names(op.attrs, op.inputs, op.outputs, dys)
    return _INTERPRETER[0].evaluate(builtin(name), names)


_RULES: dict = {}


def rule(name: str):
    """The core's rule for the built-in `name`: its expression is the first input's gradient,
    the others get none."""
    compiled = _RULES.get(name)
    if compiled is None:
        def compiled(op, *dys):
            return (_evaluate(name, op, dys),) + (None,) * (len(op.inputs) - 1)

        compiled.__name__ = name
        _RULES[name] = compiled
    return compiled
