"""Fixtures for the training tests: one parameter per backend, skipped only when absent."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gradcli import backends

sys.path.insert(0, str(Path(__file__).parent))  # oracle.py
BACKENDS = ("numpy", "torch", "jax", "tensorflow")


def _param(name: str):
    ok, detail = backends.availability(name)
    return pytest.param(name, id=name, marks=pytest.mark.skipif(not ok, reason=detail))


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", [_param(n) for n in BACKENDS])
