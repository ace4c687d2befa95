"""Helpers for the spec tests: load a spec from text, or get the SpecError it raises."""
from __future__ import annotations

import textwrap

import pytest
from spec_samples import BASE

from gradcli.errors import SpecError
from gradcli.spec import load_spec_text


@pytest.fixture
def base() -> str:
    return BASE


@pytest.fixture
def load():
    """load(text, path=..., overrides=...) -> Experiment; text is dedented."""
    def _load(text: str, path: str = "spec.yaml", overrides=()):
        return load_spec_text(textwrap.dedent(text), path=path, overrides=overrides)
    return _load


@pytest.fixture
def spec_error():
    """spec_error(text, ...) -> the SpecError that loading raises (the test fails if none)."""
    def _error(text: str, path: str = "spec.yaml", overrides=()) -> SpecError:
        with pytest.raises(SpecError) as info:
            load_spec_text(textwrap.dedent(text), path=path, overrides=overrides)
        return info.value
    return _error

