"""Fixtures for the training tests: one parameter per backend, skipped only when absent."""
from __future__ import annotations

import sys
from pathlib import Path

from available import backend_params

sys.path.insert(0, str(Path(__file__).parent))  # oracle.py


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", backend_params())
