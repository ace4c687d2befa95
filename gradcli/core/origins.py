"""The origin of the ops being built (gc.origin's label), one per thread.

Every op built reads its thread's origin, and an attribute of a threading.local costs
several times a module global's. Until some thread sets an origin other than None, every
thread's is None: the builders read `is_set` and skip the thread-local while it is False.
"""
from __future__ import annotations

import threading


class _Local(threading.local):
    current: object = None  # what gc.origin() says the ops being built come from


local = _Local()
is_set = False  # True once any thread set an origin other than None (never reset)


class _Origin:
    """ORIGIN.current: the calling thread's origin, read and set."""

    __slots__ = ()

    @property
    def current(self):
        return local.current if is_set else None

    @current.setter
    def current(self, value) -> None:
        global is_set
        if value is not None:
            is_set = True
        elif not is_set:
            return  # None in every thread already
        local.current = value


ORIGIN = _Origin()
