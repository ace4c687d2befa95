"""Load, validate and lint experiment specs (the expression language is gradcli.lang).

Imports only PyYAML, numpy, gradcli.errors, gradcli.opset and gradcli.lang: never a backend.
"""
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
from gradcli.spec.schema import json_schema

__all__ = [
    "ClipSpec", "Experiment", "ExpectSpec", "Expr", "FunctionSpec", "GradientSpec", "InputSpec",
    "LetSpec", "LintWarning", "Location", "OutputSpec", "OverrideEntry", "TrainSpec",
    "json_schema", "lint", "load_spec", "load_spec_text",
]
