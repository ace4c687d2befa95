"""Pytest parameters for gradcli's backends, each skipped (with the reason) only where its
framework is not installed: the tests of tests/backends, tests/training and tests/oracles."""
from __future__ import annotations

import pytest

from gradcli import backends

FRAMEWORKS = ("torch", "jax", "tensorflow")
BACKENDS = ("numpy",) + FRAMEWORKS


def backend_params(names: tuple[str, ...] = BACKENDS) -> list:
    """One pytest parameter per name, with the backend's own reason when it is unavailable."""
    params = []
    for name in names:
        ok, detail = backends.availability(name)
        params.append(pytest.param(name, id=name, marks=pytest.mark.skipif(not ok, reason=detail)))
    return params
