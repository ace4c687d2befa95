"""Fixtures for the backends' tests: one parameter per framework (or per backend, the numpy
core included), skipped only when absent."""
from __future__ import annotations

from available import BACKENDS, FRAMEWORKS, backend_params


def pytest_generate_tests(metafunc):
    if "framework" in metafunc.fixturenames:
        metafunc.parametrize("framework", backend_params(FRAMEWORKS))
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", backend_params(BACKENDS))
