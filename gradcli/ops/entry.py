"""What one entry of the op table holds, and `op()`, which adds one from a compact signature.

An entry is data: a name, a signature, a doc, its numpy kernel (or a formula written
once over any op namespace), its operator, which inputs take a gradient, and per
framework only the spelling that differs from the default one derived from the name.
Nothing here imports numpy or its users (core, spec, backends): a kernel named by text
("np.exp", "K.elu") is imported on the first use of `OpSpec.kernel`, so the table's data
(`gradcli list ops`, the schema, the spec checks) costs no numpy.
"""
from __future__ import annotations

import ast
import importlib
from typing import Callable

from ..record import Factory, record

FRAMEWORKS = ("torch", "jax", "tensorflow")
# The spelling a framework gets when an entry names none: the op's own name under these.
DEFAULT_SPELLING = {"torch": "torch.{name}", "jax": "jnp.{name}", "tensorflow": "tf.math.{name}"}
# How the core builds an op from its entry (ops_math/ops_array generate these families;
# "core" ops have a builder of their own there). "along_axis" ops take one axis (argmax, argmin,
# max_with_argmax): every backend normalizes it alike and takes a 0-d input as one element.
FAMILIES = ("unary", "binary", "reduction", "along_axis", "core")
# What an op gives (its first output): a tensor whose dtype follows its inputs or the spec's
# dtype; a boolean tensor; an int64 index; or a dtype name, which is no tensor and builds no
# op. No gradient flows back into a boolean or index result (the spec lint reads this).
RESULTS = ("tensor", "bool", "index", "dtype")
# Where a kernel named by text lives: "np.exp" is numpy.exp, "K.elu" is gradcli/ops/kernels.py's.
KERNEL_MODULES = {"np": "numpy", "K": "gradcli.ops.kernels"}


def resolve_kernel(ref: Callable | str | None) -> Callable | None:
    """A kernel reference as a function: a function is itself, "np.exp" imports numpy.exp."""
    if ref is None or callable(ref):
        return ref
    module, _, name = ref.partition(".")
    return getattr(importlib.import_module(KERNEL_MODULES[module]), name)


class _Kernel:
    """OpSpec.kernel: the entry's kernel_ref resolved on first use, then kept on the entry (an
    instance attribute, which Python finds before this non-data descriptor: as fast as a field).
    """

    def __get__(self, spec, owner=None):
        if spec is None:
            return self
        kernel = resolve_kernel(spec.kernel_ref)
        spec.__dict__["kernel"] = kernel  # the record is frozen; this is its cache, not a field
        return kernel


@record
class OpSpec:
    """One op of the expression language: signature, doc, kernel, gradient flow, spellings."""

    name: str
    params: tuple[str, ...]
    defaults: dict[str, object] = Factory(dict)
    doc: str = ""
    outputs: int = 1
    tensor_params: tuple[str, ...] = ()  # parameters that take tensors (the rest are attributes)
    variadic: bool = False               # the first parameter takes a list of tensors
    family: str = "core"
    # numpy forward: kernel(*input values, **attributes) -> value (or a tuple for several
    # outputs); a seeded draw (draw=True): kernel(numpy generator, shape, **attributes). As the
    # function or as where it lives ("np.exp", "K.elu"): see .kernel
    kernel_ref: Callable | str | None = None
    # the same forward written once over an op namespace `o` (o.mul, o.erfc, ...): formula(o,
    # *tensors, **attributes). The numpy kernel and every framework without a spelling use it.
    formula: Callable | None = None
    operator: str | None = None          # infix spelling, e.g. "+"
    precedence: int = 0                  # its binding strength (higher binds tighter)
    prefix: str | None = None            # prefix spelling, e.g. "-" for neg
    gradient: tuple[bool, ...] = ()      # which tensor inputs take a gradient (variadic: one flag)
    spellings: dict[str, str | None] = Factory(dict)  # framework -> spelling where it differs
    # a framework op implements it (False: the eager layer; False with a formula: a composite,
    # built by its formula from the table's own ops on every backend, see `composite`)
    native: bool = True
    chains: bool = True                  # a < b < c: comparisons refuse to chain
    result: str = "tensor"               # what its first output is: one of RESULTS
    draw: bool = False                   # a seeded random draw: kernel(generator, shape, **attributes)
    interpreted: bool = False            # the interpreter evaluates the call itself: no backend op
    step: bool = False                   # piecewise constant: true derivative zero wherever it exists
    # the frameworks whose own autodiff gives None (no gradient, where zeros are the derivative)
    # through the op as their backend runs it: TensorFlow registers none for round, floor, ceil
    no_gradient_in: tuple[str, ...] = ()

    kernel = _Kernel()  # kernel_ref as a function (numpy imported on first use)

    @property
    def signature(self) -> str:
        parts = [p if p not in self.defaults else f"{p}={self.defaults[p]!r}" for p in self.params]
        return f"{self.name}({', '.join(parts)})"

    @property
    def composite(self) -> bool:
        """Built from other ops of the table by its formula, on every backend (as TensorFlow
        builds tf.clip_by_norm in Python): no op of its own type, no gradient rule of its own;
        each part is an op of the spec, which an override_map entry can match."""
        return self.formula is not None and not self.native

    @property
    def differentiable(self) -> bool:
        """Whether any input can take a gradient through this op."""
        return any(self.gradient)

    def flows(self, n_inputs: int) -> tuple[bool, ...]:
        """Which of n_inputs inputs take a gradient (a variadic op's flag holds for all)."""
        return self.gradient * n_inputs if self.variadic else self.gradient

    def spelling(self, framework: str) -> str | None:
        """The framework's spelling: a dotted path such as 'torch.erf', a call template such as
        'F.elu(x, alpha=alpha)', or None when a formula or the backend itself provides it."""
        if framework in self.spellings:
            return self.spellings[framework]
        if self.formula is not None:
            return None
        return DEFAULT_SPELLING[framework].format(name=self.name)


OPS: dict[str, OpSpec] = {}
OPERATORS: dict[str, str] = {}        # infix text -> op name
UNARY_OPERATORS: dict[str, str] = {}  # prefix text -> op name
PRECEDENCE: dict[str, int] = {}       # infix text -> binding strength
# Prefix operators bind tighter than every infix one below this and looser than those above
# (Python's rule: -x ** 2 is -(x ** 2), and 2 ** -1 is allowed).
PREFIX_PRECEDENCE = 6


def op(signature: str, doc: str, kernel: Callable | str | None = None, *, family: str = "core",
       formula: Callable | None = None, outputs: int = 1, attrs: tuple[str, ...] = (),
       variadic: bool = False, operator: str | None = None, precedence: int = 0,
       prefix: str | None = None, gradient: bool | tuple[bool, ...] = True,
       native: bool = True, chains: bool = True, result: str = "tensor", draw: bool = False,
       interpreted: bool = False, step: bool = False, no_gradient_in: tuple[str, ...] = (),
       **spellings: str | None) -> OpSpec:
    """Add an op from a compact signature such as 'sum(x, axis=None, keepdims=False)'.

    Keyword arguments named after a framework (torch=, jax=, tensorflow=) give its spelling
    where the default (torch.<name>, jnp.<name>, tf.math.<name>) is not it. kernel is a
    function or its place, "np.<name>" or "K.<name>" (kernels.py), imported on first use.
    """
    name, _, rest = signature.partition("(")
    params, defaults = [], {}
    for part in filter(None, (p.strip() for p in rest.rstrip(")").split(","))):
        pname, eq, default = part.partition("=")
        params.append(pname)
        if eq:
            defaults[pname] = _literal(default)
    tensor_params = tuple(p for p in params if p not in attrs and p not in defaults)
    unknown = (set(spellings) | set(no_gradient_in)) - set(FRAMEWORKS)
    if unknown or family not in FAMILIES or result not in RESULTS:
        raise ValueError(f"op {name!r}: unknown framework {sorted(unknown)}, family {family!r} "
                         f"or result {result!r}")
    if isinstance(kernel, str) and kernel.partition(".")[0] not in KERNEL_MODULES:
        raise ValueError(f"op {name!r}: kernel {kernel!r} is not one of "
                         f"{', '.join(m + '.<name>' for m in KERNEL_MODULES)}")
    n_flags = 1 if variadic else len(tensor_params)
    flags = (gradient,) * n_flags if isinstance(gradient, bool) else tuple(gradient)
    if formula is not None and kernel is None:
        kernel = _numpy_formula(formula)
    # Every field is made above, so the record's checking constructor (13 us an entry, 1 ms of
    # each start-up) is skipped: the instance gets the same fields, in order, as it would set.
    spec = object.__new__(OpSpec)
    spec.__dict__.update(zip(OpSpec._fields, (
        name, tuple(params), defaults, doc, outputs, tensor_params, variadic, family, kernel,
        formula, operator, precedence, prefix, flags, dict(spellings), native, chains, result,
        draw, interpreted, step, tuple(no_gradient_in))))
    OPS[name] = spec
    if operator is not None:
        OPERATORS[operator], PRECEDENCE[operator] = name, precedence
    if prefix is not None:
        UNARY_OPERATORS[prefix] = name
    return spec


_WORDS = {"None": None, "True": True, "False": False}


def _literal(text: str):
    """A default's text as ast.literal_eval reads it; the table's (None, False, -1, 0.0, 0.5)
    without it: literal_eval compiles each, a third of the table's start-up."""
    if text in _WORDS:
        return _WORDS[text]
    digits = text.lstrip("-")
    if digits and not digits.strip("0123456789.") and (digits == "0" or digits[0] != "0"
                                                       or "." in digits):
        try:
            return float(text) if "." in text else int(text)
        except ValueError:
            pass  # "1.2.3", "--1": literal_eval says what is wrong (as for "007")
    return ast.literal_eval(text)


class _Parts:
    """A formula's `o` that only notes the op types called, in order."""

    def __init__(self) -> None:
        self.called: list[str] = []

    def __getattr__(self, name: str):
        OPS[name]  # noqa: B018 - a formula calls only ops of the table (KeyError otherwise)

        def note(*args, **kwargs):
            self.called.append(name)
            return name
        return note


_PARTS: dict[str, tuple[str, ...]] = {}


def parts(name: str) -> tuple[str, ...]:
    """The op types a composite builds, in order (its formula run over _Parts): what the op
    count and the override_map lint see in a composite's place. Any other call: (name,)."""
    found = _PARTS.get(name)
    if found is None:
        spec = OPS.get(name)
        if spec is None or not spec.composite:
            return (name,)
        recorder = _Parts()
        attrs = {p: spec.defaults.get(p) for p in spec.params if p not in spec.tensor_params}
        spec.formula(recorder, *spec.tensor_params, **attrs)
        found = _PARTS[name] = tuple(recorder.called)
    return found


class _Kernels:
    """The table's numpy kernels by op name: in a formula, o.mul is the mul entry's kernel."""

    __slots__ = ()

    def __getattr__(self, name: str):
        return OPS[name].kernel


NUMPY = _Kernels()


def _numpy_formula(formula: Callable) -> Callable:
    """The numpy kernel of a formula: the formula over the table's own numpy kernels."""
    def kernel(*values, **attrs):
        return formula(NUMPY, *values, **attrs)
    return kernel
