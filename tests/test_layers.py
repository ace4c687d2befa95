"""Import direction between the packages (architecture.md), read from each file's import
statements with `ast` (imports inside functions included): the expression language imports
no core, backend, spec, CLI, runner or rendering; the core imports no language, spec or
backend (gradcli/builtins.py, above both, compiles the built-in gradients' text for the core);
the op table imports none of them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradcli

ROOT = Path(gradcli.__file__).parent

RULES = {
    "lang": ("gradcli.backends", "gradcli.spec", "gradcli.cli", "gradcli.cli_common",
             "gradcli.cli_figures", "gradcli.cli_sweep", "gradcli.runner", "gradcli.render",
             "gradcli.render_compare", "gradcli.render_formats", "gradcli.render_sweep",
             "gradcli.render_train", "gradcli.plot", "gradcli.report", "gradcli.sweep",
             "gradcli.training", "gradcli.core", "gradcli.builtins"),
    # (core/control.py asks gradcli/builtins.py for a built-in's compiled rule when it first
    # runs: the one import above the core, documented there; it brings no language to import)
    "core": ("gradcli.lang", "gradcli.spec", "gradcli.backends"),
    # the op table is data (the built-in gradients' text included) that every layer reads
    "ops": ("gradcli.core", "gradcli.lang", "gradcli.spec", "gradcli.backends", "gradcli.builtins",
            "gradcli.runner", "gradcli.cli"),
}


def imported(source: str, module: str) -> set[str]:
    """Every module an import statement in `source` names, written out in full: for
    `from a import b` both `a` and `a.b` (b may be a submodule); relative imports resolved
    against `module`, the dotted name of the file that holds `source`."""
    package = module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return found


def breaches(source: str, module: str, forbidden) -> list[str]:
    return sorted(name for name in imported(source, module)
                  if any(name == f or name.startswith(f + ".") for f in forbidden))


@pytest.mark.parametrize("package", sorted(RULES))
def test_each_package_imports_no_layer_it_must_not(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"gradcli/{package} holds no Python files"
    found = {}
    for path in files:
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if parts[-1] == "__init__":
            module += ".__init__"  # so relative imports resolve against the package itself
        bad = breaches(path.read_text(), module, RULES[package])
        if bad:
            found[str(path.relative_to(ROOT))] = bad
    assert found == {}


def test_the_reader_sees_relative_absolute_and_nested_imports():
    # the checker above is only as good as this reader: each form of a forbidden import is caught
    source = ("from ..backends import numpy\n"
              "from . import ast\n"
              "import gradcli.runner as r\n"
              "def f():\n"
              "    from gradcli.spec.fields import fail\n"
              "    from .. import render\n")
    assert breaches(source, "gradcli.lang.interpret", RULES["lang"]) == [
        "gradcli.backends", "gradcli.backends.numpy", "gradcli.render", "gradcli.runner",
        "gradcli.spec.fields", "gradcli.spec.fields.fail"]
    assert breaches("from . import ast\nfrom .checks import GRAD\n", "gradcli.lang.interpret",
                    RULES["lang"]) == []
    assert breaches("from ..lang import ast\n", "gradcli.core.graph", RULES["core"]) == [
        "gradcli.lang", "gradcli.lang.ast"]
