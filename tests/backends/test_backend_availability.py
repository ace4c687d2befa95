"""A missing framework is a clear error with the pip hint, and nothing imports a framework early."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcli import backends
from gradcli.cli import cli
from gradcli.errors import BackendUnavailable
from gradcli.spec import load_spec

ROOT = Path(__file__).parent.parent.parent
SPEC = ROOT / "experiments" / "unconnected_none.yaml"
FRAMEWORKS = ("torch", "jax", "tensorflow")


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_missing_framework_is_backend_unavailable_with_the_pip_hint(monkeypatch, name):
    monkeypatch.setitem(sys.modules, name, None)  # `import name` now fails as if not installed
    assert backends.availability(name) == (False, f"{name} is not installed")
    hint = rf"backend '{name}' needs the {name} package: pip install 'gradcli\[{name}\]'"
    with pytest.raises(BackendUnavailable, match=hint):
        backends.build(load_spec(SPEC), name)
    # the backend module's own build says the same when the import fails after all
    module = importlib.import_module(f"gradcli.backends.{name}")
    with pytest.raises(BackendUnavailable, match=hint):
        module.build(load_spec(SPEC))


def test_missing_framework_exits_2_from_the_command_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)
    result = CliRunner().invoke(cli, ["run", str(SPEC), "--backend", "jax"])
    assert result.exit_code == 2
    assert "pip install 'gradcli[jax]'" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_list_backends_shows_availability_and_version(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    result = CliRunner().invoke(cli, ["list", "backends"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if "│" in line}
    assert "no" in rows["tensorflow"] and "not installed" in rows["tensorflow"]
    for name in ("torch", "jax"):
        ok, detail = backends.availability(name)
        assert ("yes" if ok else "no") in rows[name] and detail in rows[name]


def test_no_framework_is_imported_by_gradcli_or_by_listing_backends():
    code = ("import sys, gradcli.cli, gradcli.runner\n"
            "from gradcli import backends\n"
            "from gradcli.backends import torch, jax, tensorflow, eager, eager_program, eager_train\n"
            "[backends.availability(n) for n in backends.NAMES]\n"
            "print(sorted({'torch', 'jax', 'tensorflow'} & set(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(not backends.availability("tensorflow")[0], reason="tensorflow is not installed")
def test_tensorflow_start_up_lines_stay_off_stderr():
    code = ("from gradcli import backends, runner\n"
            "from gradcli.spec import load_spec\n"
            f"runner.run(load_spec({str(SPEC)!r}), backend='tensorflow')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "oneDNN" not in out.stderr and "absl" not in out.stderr, out.stderr
