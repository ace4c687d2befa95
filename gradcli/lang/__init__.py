"""The expression language of specs: tokens, parser, AST, checks, dependencies, interpreter.

Imports gradcli.errors, gradcli.ops and gradcli.record alone: never spec/ (which
reads YAML and calls in here), a backend, the runner, the CLI or rendering. A backend
supplies tensors and ops to the interpreter through its `Builder` interface.
"""
from gradcli.lang.ast import Call, Const, IndexExpr, ListExpr, Name, Node, SliceExpr
from gradcli.lang.parser import parse_expression

__all__ = ["Call", "Const", "IndexExpr", "ListExpr", "Name", "Node", "SliceExpr",
           "parse_expression"]
