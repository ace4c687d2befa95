"""The op table of the expression language (table.py), and what it exports.

Data with numpy kernels, imported on first use (OpSpec.kernel): importing it imports neither
numpy nor core, spec or backends, so that all of them (and `gradcli list ops`) can read it.
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
                    parts,
)

DTYPES = ("float32", "float64", "int32", "int64", "bool")
# The seeded random draws (uniform, normal, bernoulli): a spec that calls one depends on its seed.
DRAWS = tuple(name for name, spec in OPS.items() if spec.draw)

# TensorFlow's names for ops this table names otherwise, by op_key: only did-you-mean reads
# them (reduce_max(...) or `override_map: {ReduceMax: ...}` -> "did you mean 'max'?").
TF_NAMES = {"reducemax": "max", "reducemin": "min", "reducesum": "sum", "reducemean": "mean",
            "reduceprod": "prod", "reducelogsumexp": "logsumexp", "multiply": "mul",
            "subtract": "sub", "divide": "div", "truediv": "div", "realdiv": "div",
            "negative": "neg", "clipbyvalue": "clip", "concatv2": "concat"}


def op_key(op_type: str) -> str:
    """An op type as override maps match it: ignoring case and underscores, so TensorFlow's
    "Sign", "StopGradient" and "ZeroOut" name sign, stop_gradient and zero_out (the spec's
    override_map, the core's override scopes and the eager backends' all match by this)."""
    return op_type.lower().replace("_", "")


def tf_alias(name: str) -> str | None:
    """The op this table has for TensorFlow's `name` (reduce_max, ReduceMax: max), else None."""
    return TF_NAMES.get(op_key(name))


# The named gradients every backend provides out of the box, each written once here as
# expression-language text: the gradient of the op's FIRST input (the others get none), seeing
# what a spec's `register:` gradient sees (x, x0.., y, y0.., dy, dy0.., the op's attributes).
# gradcli/builtins.py registers them as the core's rules (gc.gradient_override_map); the
# eager backends evaluate the same text. Each matches TensorFlow's own gradient bit for bit
# (tests/oracles/test_builtin_gradients.py): bare numbers take the dtype beside them (float32
# stays float32), where() keeps dy's -0.0 and NaN where it passes dy and gives +0.0 elsewhere.
BUILTINS = {
    "identity": ("dy", "the plain straight-through estimator"),
    "hardtanh": ("where(abs(x) <= 1, dy, 0)",
                 "straight-through inside [-1, 1] (|x| = 1 included), 0 outside and where x is "
                 "NaN (the seeds' QuantizeGrad, tf.where(tf.abs(x) <= 1, dy, 0))"),
    "reverse": ("-dy", "flips the gradient (0 becomes -0.0, as tf.negative)"),
    "zero": ("zeros_like(x)", "blocks the gradient but keeps the input connected (zeros, not "
                              "None)"),
}
# name -> "expression: what it does" (gradcli list gradients, the JSON Schema, spec checks)
BUILTIN_GRADIENTS = {name: f"{text}: {doc}" for name, (text, doc) in BUILTINS.items()}

# Calls the language gives a meaning of its own, not ops of the table (gradcli list ops; a doc
# of at most 176 characters, as the table's, keeps that table one line a row, printed without rich).
LANGUAGE_FORMS = {
    "grad(y, x)": "the gradient of sum(y) with respect to the input or let x, as a value of x's "
                  "shape (zeros where unconnected): second derivatives, Hessian-vector products, "
                  "gradient penalties",
}

__all__ = ["BUILTINS", "BUILTIN_GRADIENTS", "DEFAULT_SPELLING", "DRAWS", "DTYPES", "FRAMEWORKS",
           "LANGUAGE_FORMS", "NUMPY", "OPERATORS", "OPS", "PRECEDENCE", "PREFIX_PRECEDENCE",
           "UNARY_OPERATORS", "OpSpec", "op_key", "parts"]
