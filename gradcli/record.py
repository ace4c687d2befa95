"""Small records without the start-up cost of dataclasses.

A dataclass costs about a millisecond to create (it compiles its methods with
exec); gradcli's CLI defines dozens of them before it runs anything, so its
start-up paid for that. @record gives the same constructor, equality, hash,
repr and immutability from shared methods, at the cost of a class statement.
"""
from __future__ import annotations


class Factory:
    """A default made fresh for every instance: `notes: list = Factory(list)`."""

    __slots__ = ("make",)

    def __init__(self, make) -> None:
        self.make = make


class Hidden:
    """A default that is left out of repr: `text: str = Hidden()` (required)."""

    __slots__ = ()


def record(cls=None, *, frozen: bool = True):
    """Class decorator: fields from the annotations, in order, defaults from the class body."""
    def build(cls):
        names = tuple(cls.__dict__.get("__annotations__", {}))
        defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
        hidden = {n for n, d in defaults.items() if isinstance(d, Hidden)}
        for n in hidden:
            del defaults[n]
        for n in names:
            if n in cls.__dict__:
                delattr(cls, n)
        cls._fields, cls.__match_args__ = names, names
        cls.__init__ = _make_init(cls.__name__, names, defaults)
        cls.__eq__ = _eq
        shown = tuple(n for n in names if n not in hidden)
        cls.__repr__ = lambda self: _repr(self, shown)
        if frozen:
            cls.__hash__ = lambda self: hash(tuple(getattr(self, n) for n in names))
            cls.__setattr__ = _frozen
            cls.__delattr__ = _frozen
        else:
            cls.__hash__ = None
        return cls
    return build(cls) if cls is not None else build


def _make_init(name: str, names: tuple, defaults: dict):
    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{name}() takes {len(names)} arguments, got {len(args)}")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{name}() got an unexpected or repeated argument {key!r}")
            values[key] = value
        for n in names:
            if n not in values:
                if n not in defaults:
                    raise TypeError(f"{name}() missing argument {n!r}")
                default = defaults[n]
                values[n] = default.make() if isinstance(default, Factory) else default
            object.__setattr__(self, n, values[n])
    return __init__


def _repr(self, names: tuple) -> str:
    return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


def _eq(self, other):
    if type(other) is not type(self):
        return NotImplemented
    fields = self._fields
    return tuple(getattr(self, n) for n in fields) == tuple(getattr(other, n) for n in fields)


def _frozen(self, *args):
    raise AttributeError(f"{type(self).__name__} is immutable")
