"""Backends: each runs a spec with one framework's own autodiff.

Frameworks are imported only when their backend is used, so a missing one is
a clear BackendUnavailable, never an ImportError at start-up.
"""
from __future__ import annotations

import importlib

from ..errors import BackendUnavailable, GradcliError

NAMES = ("numpy", "torch", "jax", "tensorflow")
EXTRAS = {"torch": "torch", "jax": "jax", "tensorflow": "tensorflow"}


def _module(name: str):
    if name not in NAMES:
        raise GradcliError(f"unknown backend {name!r}; choose one of {', '.join(NAMES)}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        raise BackendUnavailable(f"backend {name!r} is not part of this gradcli build ({exc})") from None


def availability(name: str) -> tuple[bool, str]:
    """(available, version or the reason it is not)."""
    try:
        return _module(name).available()
    except GradcliError as exc:
        return False, str(exc)


def build(experiment, backend: str | None = None):
    """Build the experiment's graph once on the named backend (default: the spec's)."""
    name = backend or experiment.backend
    module = _module(name)
    ok, detail = module.available()
    if not ok:
        raise BackendUnavailable(f"backend {name!r} needs the {EXTRAS.get(name, name)} package: "
                                 f"pip install 'gradcli[{EXTRAS.get(name, name)}]' ({detail})")
    return module.build(experiment)
