"""Backends: each runs a spec with one framework's own autodiff.

Frameworks are imported only when their backend is used, so a missing one is
a clear BackendUnavailable, never an ImportError at start-up.
"""
from __future__ import annotations

import importlib
import sys

from ..errors import BackendUnavailable, GradcliError

NAMES = ("numpy", "torch", "jax", "tensorflow")
EXTRAS = {"torch": "torch", "jax": "jax", "tensorflow": "tensorflow"}
# What each backend needs: (module, the distributions that may provide it), each read from
# the installed metadata without importing it or the backend (`gradcli list backends` imports
# no numpy, no framework); the first is the one whose version is shown.
NEEDS = {
    "numpy": (("numpy", ("numpy",)),),
    "torch": (("torch", ("torch",)),),
    "jax": (("jax", ("jax",)), ("jaxlib", ("jaxlib",))),
    "tensorflow": (("tensorflow", ("tensorflow", "tensorflow-cpu", "tf-nightly",
                                   "tensorflow-macos", "tensorflow-intel")),),
}
NOTES = {"numpy": " (bundled core)"}  # said after the version


def _module(name: str):
    if name not in NAMES:
        raise GradcliError(f"unknown backend {name!r}; choose one of {', '.join(NAMES)}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        raise BackendUnavailable(f"backend {name!r} is not part of this gradcli build ({exc})") from None


def availability(name: str) -> tuple[bool, str]:
    """(available, version or the reason it is not), importing neither the backend nor its
    framework."""
    if name not in NAMES:
        return False, f"unknown backend {name!r}; choose one of {', '.join(NAMES)}"
    (module, dists), *others = NEEDS[name]
    ok, detail = installed(module, dists)
    for other, other_dists in others:
        if ok and not installed(other, other_dists)[0]:
            return False, f"{module} is installed without {other}"
    return ok, detail + NOTES.get(name, "") if ok else detail


def installed(module: str, dists: tuple[str, ...]) -> tuple[bool, str]:
    """(available, "module version" or why not), without importing the module."""
    if module in sys.modules and sys.modules[module] is None:
        return False, f"{module} is not installed"
    version = getattr(sys.modules.get(module), "__version__", None)
    if isinstance(version, str):  # imported already (numpy, when a spec runs): no metadata read
        return True, f"{module} {version}"
    import importlib.metadata  # 10-30 ms of imports (email, zipfile...): listing backends only
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return False, f"{module} is not installed"
    for dist in dists:
        try:
            return True, f"{module} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return True, f"{module} {getattr(sys.modules.get(module), '__version__', '(version unknown)')}"


def build(experiment, backend: str | None = None):
    """Build the experiment's graph once on the named backend (default: the spec's)."""
    name = backend or experiment.backend
    module = _module(name)
    ok, detail = availability(name)
    if not ok:
        raise BackendUnavailable(f"backend {name!r} needs the {EXTRAS.get(name, name)} package: "
                                 f"pip install 'gradcli[{EXTRAS.get(name, name)}]' ({detail})")
    return module.build(experiment)
