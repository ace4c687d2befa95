"""Turn YAML literals (a number or rectangular nested lists) into numpy arrays."""
from __future__ import annotations

import numpy as np

from gradcli.spec.document import Map, Scalar, Seq, YNode
from gradcli.spec.fields import describe, fail, number_value

MAX_DIMS = 8
INT_RANGES = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}
FLOAT_DTYPES = ("float64", "float32")


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


def literal_array(node: YNode | None, key: str, dtype: str | None, default_float: str,
                  ) -> np.ndarray:
    """The array a literal spells; dtype None means bool when all are booleans, else floats."""
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
    return convert(values, scalars, shape, dtype, key)


def convert(values: list, nodes: list, shape: tuple, dtype: str, key: str) -> np.ndarray:
    """Python numbers -> an array of `dtype`, refusing lossy conversions with a located error."""
    if dtype == "bool":
        for v, n in zip(values, nodes):
            if type(v) is not bool and v not in (0, 1):
                raise fail(n, key, f"expected true or false in a bool tensor, got {v!r}")
        out = np.array([bool(v) for v in values], dtype=bool)
    elif dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        ints = []
        for v, n in zip(values, nodes):
            if type(v) is bool or (isinstance(v, float) and not v.is_integer()):
                raise fail(n, key, f"expected an integer in an {dtype} tensor, got {v!r}")
            if not lo <= int(v) <= hi:
                raise fail(n, key, f"{int(v)} does not fit in {dtype}")
            ints.append(int(v))
        out = np.array(ints, dtype=dtype)
    else:
        floats = []
        for v, n in zip(values, nodes):
            if type(v) is bool:
                raise fail(n, key, "a boolean in a float tensor", "give dtype: bool for a mask")
            try:
                floats.append(float(v))
            except OverflowError:
                raise fail(n, key, "the number is too large for a float") from None
        wide = np.array(floats, dtype=np.float64)
        with np.errstate(over="ignore"):  # an overflow is reported below, with its place
            out = wide.astype(dtype)
        if dtype == "float32":
            lost = np.isfinite(wide) & ~np.isfinite(out)
            if lost.any():
                at = int(np.argmax(lost))
                raise fail(nodes[at], key, f"{floats[at]!r} is too large for float32")
    return out.reshape(shape)
