"""gradcli: see, test and trust custom gradients.

`import gradcli as gc` gives the bundled autodiff core: tensors, ops, gc.gradients
and TensorFlow-style gradient control, with no framework installed.

The core (and numpy with it) is imported on first use of one of its names, not here:
the command line imports this package too, and `gradcli --help` needs none of it.
"""
# underscored (and no __future__ import): `dir(gradcli)` is the library's names, not ours
import importlib.util as _importlib_util
import sys as _sys

__version__ = "0.1.0"


def _core():
    """Import the core and bind its public names here, as `from .core import *` would."""
    core = _submodule("core")
    for name in core.__all__:
        if name in vars(core):  # not gc.train: the core imports it on first use, and so do we
            globals().setdefault(name, vars(core)[name])  # a submodule bound meanwhile wins, as before
    globals()["__all__"] = core.__all__
    return core


def _submodule(name: str):
    # __import__, not `from . import` (which would ask __getattr__ again) nor
    # importlib.import_module (which `python -X importtime` does not report)
    __import__(f"{__name__}.{name}")
    return _sys.modules[f"{__name__}.{name}"]


def __getattr__(name: str):
    if name.startswith("__") and name != "__all__":  # __wrapped__, __file__ probes...: not ours
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # A submodule (`from . import runner`, gradcli.ops): imported as Python would, without the core.
    # No submodule shares a name with the core's public names (tests/cli/test_cli_imports.py).
    if name != "__all__" and _importlib_util.find_spec(f"{__name__}.{name}") is not None:
        return _submodule(name)
    core = _core()
    if name == "__all__":
        return core.__all__
    if name in core.__all__:
        return globals().setdefault(name, getattr(core, name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_core().__all__))
