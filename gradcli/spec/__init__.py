"""Load, validate and lint experiment specs (the expression language is gradcli.lang).

Imports only PyYAML, gradcli.errors, gradcli.ops and gradcli.lang: never a backend; numpy
only to read a `data:` section or a `load:` file, and when a run asks for an input's array.
Each name below is imported from its module on first use, not with the package: `gradcli
schema` reads spec/schema.py and spec/sections.py without the loader (or PyYAML).
"""
from __future__ import annotations

import sys

# name -> the module of this package that defines it
_HOME = {
    "LintWarning": "lint", "lint": "lint", "unmatched_at_run": "lint",
    "load_spec": "load", "load_spec_text": "load",
    "ClipSpec": "model", "ExpectSpec": "model", "Experiment": "model", "Expr": "model",
    "FunctionSpec": "model", "GradientSpec": "model", "InputSpec": "model", "LetSpec": "model",
    "Location": "model", "OutputSpec": "model", "OverrideEntry": "model", "TrainSpec": "model",
    "json_schema": "schema",
}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:  # a submodule (`from gradcli.spec import document`) is then imported as usual
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{home}")  # as an import statement would (-X importtime reports it)
    module = sys.modules[f"{__name__}.{home}"]
    if _HOME.get(home) == home:  # the import bound `lint` to its module: the function is meant
        globals()[home] = getattr(module, home)
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
