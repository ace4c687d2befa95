"""gradcli's bundled reverse-mode autodiff core on numpy: the library behind `import gradcli`."""
import sys
import types

from ..fd import directional_projection
from ..ops import OPS as _OPS
from . import control as _control  # noqa: F401 - registers the gradient-control rules
from . import grad_rules as _grad_rules  # noqa: F401 - registers every op type's gradient
from . import ops_array as _ops_array
from . import ops_math as _ops_math
from .autodiff import gradients, true_gradients
from .budget import MemoryBudget, memory_budget
from .control import custom_gradient, grad_pass_through, reverse_gradient, stop_gradient
from .evaluate import evaluate, function
from .graph import Op, Tensor, Variable
from .nonfinite import NonFinite, find_nonfinite, origin
from .ops_array import add_n, broadcast_to, set_seed, sum_to
from .ops_math import constant, variable
from .registry import (
    OverrideUnusedWarning,
    gradient_override_map,
    register_gradient,
    registered_names,
    unregister_gradient,
)

# Every op of the table under its own name (gc.exp, gc.sum, gc.argmax, ...): the builders the
# table generates and the core's own. grad_pass_through is gc's decorator form, as TF's.
for _name in _OPS:
    if not callable(globals().get(_name)):
        _builder = getattr(_ops_math, _name, None) or getattr(_ops_array, _name, None)
        if _builder is not None:
            globals()[_name] = _builder

# name -> the module that defines it, imported on first use of one of its names: a run
# without train.clip never needs clipping, one with --no-numeric no finite differences
_LAZY = {"clip_by_global_norm": "clipping", "clip_by_norm": "clipping", "clip_by_value": "clipping",
         "global_norm": "clipping", "numeric_gradients": "numeric"}


def _from_clipping(name: str):
    if name.startswith("__"):  # import-system probes (__path__...): not clipping's names
        raise AttributeError(name)
    return getattr(__import__(f"{__name__}.clipping", fromlist=["_"]), name)


# Clipping lives in core/clipping.py: a submodule named clip, imported after the clip op is
# bound (lazily, or by a user's `import gradcli.core.clip`), would be bound over the op.
# The old module path stays importable as this alias, found in sys.modules, so importing it
# binds nothing; its names load core/clipping.py on first use.
_clip_alias = types.ModuleType(f"{__name__}.clip", "Alias of gradcli.core.clipping.")
_clip_alias.__getattr__ = _from_clipping
sys.modules[_clip_alias.__name__] = _clip_alias

# Everything above except the implementation modules; gc.train stays a namespace.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and type(_v).__name__ != "module"] + [*_LAZY, "train"]


def __getattr__(name: str):
    # gc.train (optimizers, tf_updates) on first use: a run that does not train never needs it
    if name == "train":
        # not `from . import train`: it asks this __getattr__ again before importing
        import importlib
        return importlib.import_module(f"{__name__}.train")
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{home}")  # as an import statement would (-X importtime reports it)
    value = globals()[name] = getattr(sys.modules[f"{__name__}.{home}"], name)
    return value
