"""gradcli: see, test and trust custom gradients.

`import gradcli as gc` gives the bundled autodiff core: tensors, ops, gc.gradients
and TensorFlow-style gradient control, with no framework installed.
"""
from . import builtins as _builtins  # noqa: F401 - registers the built-in named gradients
from .core import *  # noqa: F401,F403 - the core is the library's public API
from .core import __all__  # noqa: F401

__version__ = "0.1.0"
