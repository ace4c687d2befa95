"""The op table of the expression language (table.py), and what it exports.

Data with numpy kernels: it imports numpy and nothing of core, spec or backends, so
that all of them can read it.
"""
from . import table as _table  # noqa: F401 - fills OPS
from .entry import (
                    DEFAULT_SPELLING,
                    FRAMEWORKS,
                    NUMPY,
                    OPERATORS,
                    OPS,
                    PRECEDENCE,
                    PREFIX_PRECEDENCE,
                    UNARY_OPERATORS,
                    OpSpec,
)

DTYPES = ("float32", "float64", "int32", "int64", "bool")

# Named gradients every backend provides out of the box (gradcli list gradients).
BUILTIN_GRADIENTS = {
    "identity": "dy: the plain straight-through estimator",
    "hardtanh": "dy where |x| <= 1, else 0: straight-through inside [-1, 1] (the seeds' QuantizeGrad)",
    "reverse": "-dy: flips the gradient",
    "zero": "0: blocks the gradient but keeps the input connected",
}

# Calls the language gives a meaning of its own, not ops of the table (gradcli list ops).
LANGUAGE_FORMS = {
    "grad(y, x)": "the gradient of sum(y) with respect to the input or let x, as a value (x's "
                  "shape, zeros where unconnected): second derivatives, Hessian-vector products, "
                  "gradient penalties (docs/spec.md)",
}

__all__ = ["BUILTIN_GRADIENTS", "DEFAULT_SPELLING", "DTYPES", "FRAMEWORKS", "LANGUAGE_FORMS", "NUMPY",
           "OPERATORS", "OPS", "PRECEDENCE", "PREFIX_PRECEDENCE", "UNARY_OPERATORS", "OpSpec"]
