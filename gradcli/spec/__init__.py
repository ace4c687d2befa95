"""Load, validate and lint experiment specs; parse the expression language.

Imports only PyYAML, numpy, gradcli.errors and gradcli.opset: never a backend.
"""
from gradcli.spec.ast import Call, Const, IndexExpr, ListExpr, Name, Node, SliceExpr
from gradcli.spec.lint import LintWarning, lint
from gradcli.spec.load import load_spec, load_spec_text
from gradcli.spec.model import (
                                ClipSpec,
                                ExpectSpec,
                                Experiment,
                                Expr,
                                FunctionSpec,
                                GradientSpec,
                                InputSpec,
                                LetSpec,
                                Location,
                                OutputSpec,
                                OverrideEntry,
                                TrainSpec,
)
from gradcli.spec.parser import parse_expression
from gradcli.spec.schema import json_schema

__all__ = [
    "Call", "ClipSpec", "Const", "Experiment", "ExpectSpec", "Expr", "FunctionSpec",
    "GradientSpec", "IndexExpr", "InputSpec", "LetSpec", "LintWarning", "ListExpr", "Location",
    "Name", "Node", "OutputSpec", "OverrideEntry", "SliceExpr", "TrainSpec", "json_schema", "lint",
    "load_spec", "load_spec_text", "parse_expression",
]
