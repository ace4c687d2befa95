"""YAML literals (a number or rectangular nested lists) checked in plain Python, and the
recipes that make an input's numpy array only when a run first asks for it.

Checked without numpy on purpose: `gradcli check` validates every literal (shape, dtype,
range, float32 overflow) the way the arrays would be made, and so never imports numpy
(about 60 ms, more than the rest of the check). Each recipe's `array()` is the one place
its numpy array is made, with the same calls as before the recipes, so a run sees the same
bits.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

from gradcli.spec.document import Map, Scalar, Seq, YNode
from gradcli.spec.fields import describe, fail, number_value

MAX_DIMS = 8
INT_RANGES = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}
FLOAT_DTYPES = ("float64", "float32")
# The smallest float64 magnitude that float32 rounds to infinity: the midpoint between
# float32's largest value (2**128 - 2**104) and 2**128, which rounds to even, upwards.
FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


def flatten(node: YNode | None, key: str) -> tuple[list[Scalar], tuple[int, ...]]:
    """The scalars of a number or nested list, row-major, and its shape."""
    level, shape = [node], []
    while any(isinstance(n, Seq) for n in level):
        for n in level:
            if not isinstance(n, Seq):
                raise fail(n, key, f"a nested list mixes numbers and lists: expected a list "
                                   f"here, got {describe(n)}")
        width = len(level[0].items)
        for n in level:
            if len(n.items) != width:
                raise fail(n, key, f"ragged nested list: this list has {len(n.items)} "
                                   f"item{'s' if len(n.items) != 1 else ''} where the first "
                                   f"list at the same depth has {width}")
        shape.append(width)
        if len(shape) > MAX_DIMS:
            raise fail(node, key, f"the list nests more than {MAX_DIMS} levels: at most "
                                  f"{MAX_DIMS} dimensions")
        level = [item for n in level for item in n.items]
    for n in level:
        if not isinstance(n, Scalar):
            raise fail(n, key, f"expected a number or a list of numbers, got {describe(n)}")
    return level, tuple(shape)


def literal(node: YNode | None, key: str, dtype: str | None, default_float: str) -> Literal:
    """The checked literal; dtype None means bool when all are booleans, else floats."""
    if isinstance(node, Map) or node is None:
        raise fail(node, key, f"expected a number or a list of numbers, got {describe(node)}")
    scalars, shape = flatten(node, key)
    values = []
    for s in scalars:
        value = s.value if s.kind == "bool" else number_value(s, key, finite=False)
        if value is None:
            raise fail(s, key, f"expected a number, got {describe(s)}")
        values.append(value)
    if dtype is None:
        all_bool = bool(values) and all(type(v) is bool for v in values)
        dtype = "bool" if all_bool else default_float
    return Literal(convert(values, scalars, dtype, key), shape, dtype)


def convert(values: list, nodes: list, dtype: str, key: str) -> list:
    """Python numbers -> the Python values of a `dtype` array, refusing lossy conversions
    with a located error."""
    if dtype == "bool":
        for v, n in zip(values, nodes):
            if type(v) is not bool and v not in (0, 1):
                raise fail(n, key, f"expected true or false in a bool tensor, got {v!r}")
        return [bool(v) for v in values]
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        ints = []
        for v, n in zip(values, nodes):
            if type(v) is bool or (isinstance(v, float) and not v.is_integer()):
                raise fail(n, key, f"expected an integer in an {dtype} tensor, got {v!r}")
            if not lo <= int(v) <= hi:
                raise fail(n, key, f"{int(v)} does not fit in {dtype}")
            ints.append(int(v))
        return ints
    floats = []
    for v, n in zip(values, nodes):
        if type(v) is bool:
            raise fail(n, key, "a boolean in a float tensor", "give dtype: bool for a mask")
        try:
            floats.append(float(v))
        except OverflowError:
            raise fail(n, key, "the number is too large for a float") from None
    if dtype == "float32":
        for f, n in zip(floats, nodes):
            if FLOAT32_OVERFLOW <= abs(f) < math.inf:
                raise fail(n, key, f"{f!r} is too large for float32")
    return floats


class Recipe:
    """How to make one array: its dtype name ("float64", "int32", "bool"...), its shape, and
    `array()`, which makes it on the first call and returns that same array after."""

    __slots__ = ("dtype", "shape", "_array")

    def __init__(self, dtype: str, shape: tuple[int, ...]) -> None:
        self.dtype, self.shape, self._array = dtype, shape, None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def array(self):
        if self._array is None:
            self._array = self.make()
        return self._array

    def make(self):
        raise NotImplementedError

    def reshaped(self, shape: tuple[int, ...]) -> Recipe:
        """The same values in `shape` (the caller checked the size)."""
        return Reshaped(self, shape)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dtype} {list(self.shape)}>"


class Literal(Recipe):
    """A literal's checked values, flat and row-major."""

    __slots__ = ("values",)

    def __init__(self, values: list, shape: tuple[int, ...], dtype: str) -> None:
        super().__init__(dtype, shape)
        self.values = values

    def make(self):
        import numpy as np
        if self.dtype in FLOAT_DTYPES:  # through float64, as the floats were checked
            out = np.array(self.values, dtype=np.float64).astype(self.dtype)
        else:
            out = np.array(self.values, dtype=self.dtype)
        return out.reshape(self.shape)


class Reshaped(Recipe):
    """Another recipe's array in another shape (an input's `shape:` key)."""

    __slots__ = ("base",)

    def __init__(self, base: Recipe, shape: tuple[int, ...]) -> None:
        super().__init__(base.dtype, shape)
        self.base = base

    def make(self):
        return self.base.array().reshape(self.shape)


class Made(Recipe):
    """An array already made (a loaded file, a data batch)."""

    __slots__ = ()

    def __init__(self, array) -> None:
        super().__init__(str(array.dtype), tuple(array.shape))
        self._array = array


class Draw(Recipe):
    """Seeded random values: `uniform` between a and b, or `normal` with mean a, std b."""

    __slots__ = ("kind", "seeds", "a", "b")

    def __init__(self, kind: str, seeds: list[int], a: float, b: float, shape, dtype) -> None:
        super().__init__(dtype, shape)
        self.kind, self.seeds, self.a, self.b = kind, seeds, a, b

    def make(self):
        import numpy as np
        rng = np.random.default_rng(self.seeds)
        draw = rng.uniform if self.kind == "uniform" else rng.normal
        return draw(self.a, self.b, size=self.shape).astype(self.dtype)

    def may_overflow(self) -> bool:
        """Whether numpy could refuse the range or warn of a float32 overflow (generously)."""
        if self.kind == "uniform":
            if not math.isfinite(self.b - self.a):
                return True
            reach = max(abs(self.a), abs(self.b))
        else:  # numpy's normal draws stay within about 14 standard deviations
            reach = abs(self.a) + 64 * self.b
        return self.dtype == "float32" and reach >= FLOAT32_OVERFLOW / 2


class Fill(Recipe):
    """All zeros or all ones."""

    __slots__ = ("one",)

    def __init__(self, one: bool, shape, dtype) -> None:
        super().__init__(dtype, shape)
        self.one = one

    def make(self):
        import numpy as np
        return (np.ones if self.one else np.zeros)(self.shape, dtype=self.dtype)


class Linspace(Recipe):
    """`count` evenly spaced values from start to stop."""

    __slots__ = ("start", "stop")

    def __init__(self, start: float, stop: float, count: int, dtype: str) -> None:
        super().__init__(dtype, (count,))
        self.start, self.stop = start, stop

    def make(self):
        import numpy as np
        return np.linspace(self.start, self.stop, self.shape[0]).astype(self.dtype)

    def may_overflow(self) -> bool:
        """Whether numpy could warn of an overflow (generously)."""
        reach = max(abs(self.start), abs(self.stop))
        return not math.isfinite(self.stop - self.start) or (
            self.dtype == "float32" and reach >= FLOAT32_OVERFLOW / 2)


class Arrays(Mapping):
    """name -> array, each made from its recipe on first use; a None recipe stays None
    (an expected unconnected gradient)."""

    def __init__(self, recipes: dict) -> None:
        self.recipes = recipes

    def __getitem__(self, name: str):
        recipe = self.recipes[name]
        return None if recipe is None else recipe.array()

    def __iter__(self):
        return iter(self.recipes)

    def __len__(self) -> int:
        return len(self.recipes)

    def __repr__(self) -> str:
        return f"Arrays({self.recipes!r})"
