"""The op table's old address: everything lives in gradcli/ops/ (table.py holds the entries)."""
from .ops import BUILTIN_GRADIENTS, BUILTINS, DTYPES, OPERATORS, OPS, PRECEDENCE, UNARY_OPERATORS, OpSpec  # noqa: F401
