"""One load per data file while a sweep's values are checked.

A sweep's value check builds the spec once per swept value, and each build would read and
parse the same csv again (23 s for a 16.7 MB one). Apart from gradcli/data.py so that checking
a sweep without `data:` imports no numpy.
"""
from __future__ import annotations

import contextlib

_SHARED: dict | None = None  # key -> Loaded, inside loads_shared() only


@contextlib.contextmanager
def loads_shared():
    """Within it, a data set loaded again under the same key is the one loaded first.
    Outside it nothing is kept."""
    global _SHARED
    outer = _SHARED
    _SHARED = {} if outer is None else outer
    try:
        yield
    finally:
        _SHARED = outer


def shared(key: tuple, load):
    """load(), or inside loads_shared() the Loaded it gave for `key` (the file's resolved
    path and every parameter of the load). A load that fails is not kept."""
    if _SHARED is None:
        return load()
    if key not in _SHARED:
        _SHARED[key] = load()
    return _SHARED[key]
