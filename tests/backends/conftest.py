"""Fixtures for the backends' tests: one parameter per framework (or per backend, the numpy
core included), skipped only when absent."""
from __future__ import annotations

import pytest

from gradcli import backends

FRAMEWORKS = ("torch", "jax", "tensorflow")
BACKENDS = ("numpy",) + FRAMEWORKS


def _param(name: str):
    ok, detail = backends.availability(name)
    return pytest.param(name, id=name, marks=pytest.mark.skipif(not ok, reason=detail))


def pytest_generate_tests(metafunc):
    if "framework" in metafunc.fixturenames:
        metafunc.parametrize("framework", [_param(n) for n in FRAMEWORKS])
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", [_param(n) for n in BACKENDS])
