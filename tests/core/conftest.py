"""Fixtures for the core's tests (helpers that tests import live in core_helpers.py)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradcli as gc

_names = itertools.count()


@pytest.fixture
def gradient_name(request):
    """A fresh gradient name, unregistered again after the test."""
    made = []

    def make(stem="Grad"):
        name = f"{stem}_{request.node.name}_{next(_names)}".replace("[", "_").replace("]", "_")
        made.append(name)
        return name

    yield make
    for name in made:
        gc.unregister_gradient(name)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
