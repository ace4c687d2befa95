"""The gradient registry and override scopes (RegisterGradient, gradient_override_map).

One table maps a name, case-insensitively, to a gradient rule: op types
register their own rule under their type, users add named rules, and an
override scope remaps op types to names for the ops built inside it.
"""
from __future__ import annotations

import functools
import threading
import warnings
from contextlib import contextmanager
from typing import Callable, Mapping

from ..errors import RegistryError
from ..ops import OPS, op_key

Rule = Callable[..., object]  # rule(op, *output_grads) -> one gradient per input


class Asked:
    """What the backward walk asks of the rule it runs: the op and which of its inputs need a
    gradient. One per thread, a plain object: the walk sets both fields before every rule, and
    a thread-local's attributes cost several times a plain object's."""

    __slots__ = ("op", "mask")

    def __init__(self) -> None:
        self.op: object = None
        self.mask: tuple = ()


class _PerThread(threading.local):
    def __init__(self) -> None:
        self.asked = Asked()


_thread = _PerThread()


def asked() -> Asked:
    """The calling thread's Asked."""
    return _thread.asked


def needed(op) -> tuple[bool, ...]:
    """Which of op's inputs the running backward walk needs a gradient for, one flag each.

    TensorFlow's skip_input_indices, inverted: a rule may return None for an input whose
    flag is False, and should not build its gradient (the `0.999` of `y * 0.999` needs
    none). Outside a walk, or for another op, every input is needed.
    """
    asked = _thread.asked
    if asked.op is op:
        return asked.mask
    return (True,) * len(op.inputs)


def ask(op, mask: tuple) -> tuple:
    """The walk is about to run op's rule for the inputs in mask; returns what to restore()."""
    asked = _thread.asked
    saved = asked.op, asked.mask
    asked.op, asked.mask = op, mask
    return saved


def restore(saved: tuple) -> None:
    """Back to the outer rule's mask (a custom grad_fn may run a walk of its own)."""
    asked = _thread.asked
    asked.op, asked.mask = saved

_RULES: dict[str, Rule] = {}
_NAMES: dict[str, str] = {}        # lowercase -> name as registered, for messages and listings
_TRUE_RULES: dict[str, Rule] = {}  # control ops: the derivative of their forward function
_BUILTIN: set[str] = set()


class OverrideUnusedWarning(UserWarning):
    """An override_map entry matched no op: TensorFlow's silent no-op, made loud."""


def defgrad(op_type: str, rule: Rule, *, true: Rule | None = None) -> None:
    """Register an op type's own gradient; `true` is its real derivative if that differs."""
    key = op_type.lower()
    _RULES[key] = rule
    _NAMES[key] = op_type
    _BUILTIN.add(key)
    if true is not None:
        _TRUE_RULES[key] = true


def register_gradient(name: str, *, replace: bool = False) -> Callable[[Rule], Rule]:
    """Decorator: register `def f(op, grad, ...)` under `name` (like tf.RegisterGradient)."""
    if not isinstance(name, str) or not name:
        raise RegistryError(f"a gradient name must be a non-empty string, got {name!r}")
    key = name.lower()
    if key in _RULES and not replace:
        kind = "an op type's own gradient" if key in _BUILTIN else "a registered gradient"
        raise RegistryError(f"gradient name {name!r} is taken by {kind} ({_NAMES[key]!r}); "
                            "pick another name, or pass replace=True to "
                            "register_gradient to replace it on purpose")

    def decorate(rule: Rule) -> Rule:
        if key in _BUILTIN and replace:
            _BUILTIN.discard(key)
        _RULES[key] = rule
        _NAMES[key] = name
        return rule

    return decorate


def unregister_gradient(name: str) -> None:
    """Remove a user-registered gradient (for tests and for specs that registered one)."""
    key = name.lower()
    if key in _BUILTIN:
        raise RegistryError(f"{name!r} is built in and cannot be removed")
    _RULES.pop(key, None)
    _NAMES.pop(key, None)


def is_registered(name: str) -> bool:
    return name.lower() in _RULES


def is_builtin(name: str) -> bool:
    """An op type's own rule or a built-in named gradient (not one a user registered)."""
    return name.lower() in _BUILTIN


def lookup(name: str, *, true: bool = False) -> Rule | None:
    key = name.lower()
    return (_TRUE_RULES.get(key) if true else None) or _RULES.get(key)


def registered_names() -> list[str]:
    return sorted(_NAMES.values(), key=str.lower)


# ----- override scopes -----

class _Scopes(threading.local):
    def __init__(self) -> None:
        self.stack: list[gradient_override_map] = []


_scopes = _Scopes()


class gradient_override_map:
    """Context manager: ops of the given types built inside use the named gradients.

    Keys are op types, matched ignoring case and underscores (so TensorFlow's
    "Sign" and "ZeroOut" match sign and zero_out), values are registered
    gradient names. Scopes nest; the inner one wins. Leaving a scope in which
    an entry matched no op warns, naming the entry.
    """

    def __init__(self, mapping: Mapping[str, str], *, warn_unused: bool = True):
        self.mapping = {}
        for op_type, gradient in mapping.items():
            if not is_registered(gradient):
                raise RegistryError(f"gradient_override_map: no gradient is registered as "
                                    f"{gradient!r} (for op type {op_type!r}); register it with "
                                    "@gc.register_gradient first")
            self.mapping[op_key(op_type)] = gradient
        self.original_keys = {op_key(k): k for k in mapping}
        self.matches: dict[str, list] = {k: [] for k in self.mapping}
        self.warn_unused = warn_unused

    def __enter__(self) -> "gradient_override_map":
        _scopes.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _scopes.stack.remove(self)
        if self.warn_unused and exc[0] is None:
            for key, ops in self.matches.items():
                if not ops:
                    name = self.original_keys[key]
                    why = (f"{name!r} is not an op type (a custom_gradient in TensorFlow)"
                           if key in _not_op_types() else
                           f"no op of type {name!r} was built inside the scope")
                    warnings.warn(OverrideUnusedWarning(
                        f"gradient_override_map entry {name!r} -> {self.mapping[key]!r} "
                        f"matched no op: {why}"), stacklevel=2)

    @property
    def unused(self) -> list[str]:
        return [self.original_keys[k] for k, ops in self.matches.items() if not ops]


@functools.cache
def _not_op_types() -> frozenset:
    """What the core builds as an op but TensorFlow does not (tf.grad_pass_through is a
    custom_gradient): no override_map entry reaches it there, nor here. The op table's
    `interpreted` flag, which the spec's override_map reads too."""
    return frozenset(op_key(name) for name, spec in OPS.items() if spec.interpreted)


@contextmanager
def overrides_paused():
    """No override scope applies to the ops built inside (a gradient built as a value: its
    ops are the backward pass's, not the forward's that the scopes were written for)."""
    saved, _scopes.stack = _scopes.stack, []
    try:
        yield
    finally:
        _scopes.stack = saved


def claim_override(op) -> str | None:
    """The gradient name the innermost scope assigns to a new op, noting the match."""
    key = op_key(op.type)
    if key in _not_op_types():
        return None
    for scope in reversed(_scopes.stack):
        if key in scope.mapping:
            scope.matches[key].append(op)
            return scope.mapping[key]
    return None
