"""Build the `inputs` section: literals, seeded random draws, fills, ranges and .npz loads.

Every random draw comes from a generator seeded by (spec seed, crc32 of the
input's name), so adding or reordering inputs never changes another input.
Each input is checked here and kept as a recipe (spec/arrays.py): its array is
made when a run first asks, so only `load:` needs numpy to check a spec.
"""
from __future__ import annotations

import math
import zlib
from pathlib import Path

from gradcli.ops import DTYPES
from gradcli.spec.arrays import (
    FLOAT_DTYPES,
    INT_RANGES,
    MAX_DIMS,
    Draw,
    Fill,
    Linspace,
    Made,
    Recipe,
    literal,
)
from gradcli.spec.document import Map, Scalar, YNode
from gradcli.spec.fields import (
    check_keys,
    describe,
    expect_bool,
    expect_choice,
    expect_int,
    expect_list,
    expect_number,
    expect_str,
    fail,
    only_key,
    optional,
    sub,
)
from gradcli.spec.model import InputSpec, Location
from gradcli.spec.sections import INPUT, SOURCES

MAX_ELEMENTS = 10_000_000
MAX_TOTAL_ELEMENTS = 50_000_000


class InputBuilder:
    """Builds inputs one by one, keeping the running element count under its limit."""

    def __init__(self, *, dtype: str, seed: int, base_dir: Path) -> None:
        self.dtype, self.seed, self.base_dir = dtype, seed, base_dir
        self.total = 0

    def build(self, name: str, node: YNode, key: str, loc: Location) -> InputSpec:
        """The input `name` from its YAML value; `loc` is where its name is written."""
        if not isinstance(node, Map):
            value = literal(node, key, None, self.dtype)
            self.count(value.size, node, key)
            return InputSpec(name, value, value.dtype in FLOAT_DTYPES, loc)
        check_keys(node, key, INPUT, noun="initializer")
        source, _ = only_key(node, key, SOURCES, "an input mapping needs")
        if "key" in node.items and source != "load":
            raise fail(node.key_mark("key"), sub(key, "key"), "'key' only goes with 'load'")
        dtype_node = optional(node, "dtype")
        dtype = expect_choice(dtype_node, sub(key, "dtype"), DTYPES) if dtype_node is not None else None
        shape_node = optional(node, "shape")
        shape = parse_shape(shape_node, sub(key, "shape")) if shape_node is not None else None
        self.loaded_from = None  # _load sets it
        value = getattr(self, "_" + source)(name, node, key, source, dtype, shape)
        trainable_node = optional(node, "trainable")
        is_float = value.dtype in FLOAT_DTYPES
        trainable = is_float
        if trainable_node is not None:
            trainable = expect_bool(trainable_node, sub(key, "trainable"))
            if trainable and not is_float:
                article = "an" if value.dtype in INT_RANGES else "a"
                raise fail(trainable_node, sub(key, "trainable"),
                           f"{article} {value.dtype} input is never trainable",
                           "use a float dtype, or remove 'trainable: true'")
        return InputSpec(name, value, trainable, loc, self.loaded_from)

    def count(self, size: int, node: YNode, key: str) -> None:
        """Refuse an input, or the inputs together, past the element limits."""
        if size > MAX_ELEMENTS:
            raise fail(node, key, f"the input has {size} elements; the limit is {MAX_ELEMENTS}")
        self.total += size
        if self.total > MAX_TOTAL_ELEMENTS:
            raise fail(node, key, f"the inputs hold {self.total} elements in all; the limit is "
                                  f"{MAX_TOTAL_ELEMENTS}")

    def float_dtype(self, dtype: str | None, node: Map, key: str, source: str) -> str:
        if dtype is not None and dtype not in FLOAT_DTYPES:
            raise fail(node.get("dtype"), sub(key, "dtype"),
                       f"{source} gives floats; it cannot make a {dtype} input")
        return dtype or self.dtype

    def reshaped(self, value: Recipe, shape, node: Map, key: str) -> Recipe:
        if shape is None:
            return value
        if math.prod(shape) != value.size:
            raise fail(node.get("shape"), sub(key, "shape"),
                       f"cannot reshape {value.size} elements to shape {list(shape)}")
        return value.reshaped(shape)

    # ----- one method per source key -----
    def _value(self, name, node, key, source, dtype, shape):
        value = literal(node.get("value"), sub(key, "value"), dtype, self.dtype)
        self.count(value.size, node, key)
        return self.reshaped(value, shape, node, key)

    def _uniform(self, name, node, key, source, dtype, shape):
        lo, hi = pair(node.get(source), sub(key, source), "[low, high]")
        if not lo < hi:
            raise fail(node.get(source), sub(key, source), f"uniform needs low < high, got "
                                                           f"[{lo:g}, {hi:g}]")
        if not math.isfinite(hi - lo):  # numpy's draw refuses it (an OverflowError)
            raise fail(node.get(source), sub(key, source),
                       f"uniform needs high - low within float64's range (below 1.8e308), got "
                       f"[{lo:g}, {hi:g}]", "narrow the range")
        return self.draw(name, node, key, source, dtype, shape, lo, hi)

    def _normal(self, name, node, key, source, dtype, shape):
        mean, std = pair(node.get(source), sub(key, source), "[mean, std]")
        if std < 0:
            raise fail(node.get(source), sub(key, source), f"normal needs std >= 0, got {std:g}")
        return self.draw(name, node, key, source, dtype, shape, mean, std)

    def draw(self, name, node, key, source, dtype, shape, a, b):
        dtype = self.float_dtype(dtype, node, key, source)
        if shape is None:
            raise fail(node, key, f"a {source} input needs a shape", "add shape: [n, ...]")
        self.count(math.prod(shape), node, key)
        recipe = Draw(source, [self.seed, zlib.crc32(name.encode())], a, b, shape, dtype)
        if recipe.may_overflow():  # numpy's error or warning then comes now, as it always did
            recipe.array()
        return recipe

    def _zeros(self, name, node, key, source, dtype, shape):
        if shape is not None:
            raise fail(node.key_mark("shape"), sub(key, "shape"),
                       f"{source} already gives the shape; remove 'shape'")
        shape = parse_shape(node.get(source), sub(key, source))
        self.count(math.prod(shape), node, key)
        return Fill(source == "ones", shape, dtype or self.dtype)

    _ones = _zeros

    def _linspace(self, name, node, key, source, dtype, shape):
        spec = expect_list(node.get(source), sub(key, source), "[start, stop, count]")
        if len(spec.items) != 3:
            raise fail(spec, sub(key, source), f"expected [start, stop, count], got a list of "
                                               f"{len(spec.items)}")
        start = expect_number(spec.items[0], sub(key, source))
        stop = expect_number(spec.items[1], sub(key, source))
        count = expect_int(spec.items[2], sub(key, source), minimum=1, maximum=MAX_ELEMENTS)
        dtype = self.float_dtype(dtype, node, key, source)
        self.count(count, node, key)
        recipe = Linspace(start, stop, count, dtype)
        if recipe.may_overflow():  # numpy's warning then comes now, as it always did
            recipe.array()
        return self.reshaped(recipe, shape, node, key)

    def _load(self, name, node, key, source, dtype, shape):
        path_node = node.get("load")
        path_key = sub(key, "load")
        if not isinstance(path_node, Scalar):
            raise fail(path_node, path_key, f"expected a file name, got {describe(path_node)}")
        from gradcli.spec import npz  # zipfile only for specs that load files
        path = npz.resolve(expect_str(path_node, path_key), self.base_dir, path_node, path_key)
        self.loaded_from = path
        key_node = optional(node, "key")
        wanted = expect_str(key_node, sub(key, "key")) if key_node is not None else None
        array_name, file_shape, file_dtype = npz.read_header(path, wanted, path_node, key_node,
                                                             path_key)
        if len(file_shape) > MAX_DIMS:
            raise fail(path_node, path_key, f"the array has {len(file_shape)} dimensions; the "
                                            f"limit is {MAX_DIMS}")
        self.count(math.prod(file_shape), node, key)
        value = npz.load_array(path, array_name, path_node, path_key,
                               (file_shape, file_dtype))
        loaded = Made(self.loaded_dtype(value, dtype, path_node, path_key))
        return self.reshaped(loaded, shape, node, key)

    def loaded_dtype(self, value, dtype: str | None, node, key):
        """A loaded array in its input dtype: floats -> the spec dtype unless told otherwise."""
        import numpy as np  # npz.load_array has imported it
        kind = value.dtype.kind
        if dtype is None:
            dtype = ("bool" if kind == "b" else self.dtype if kind == "f"
                     else "int32" if value.dtype == np.int32 else "int64")
        if dtype in INT_RANGES and value.size:
            if kind == "f" and not (np.isfinite(value).all() and (value == np.round(value)).all()):
                raise fail(node, key, f"the array holds non-integer floats; it cannot be {dtype}")
            lo, hi = INT_RANGES[dtype]
            if value.min() < lo or value.max() > hi:
                raise fail(node, key, f"the array's values do not fit in {dtype}")
        if dtype == "bool" and kind != "b" and not np.isin(value, (0, 1)).all():
            raise fail(node, key, "the array holds values other than 0 and 1; it cannot be bool")
        with np.errstate(over="ignore", invalid="ignore"):
            out = value.astype(dtype)
        if dtype in FLOAT_DTYPES and kind == "f" and (np.isfinite(value) & ~np.isfinite(out)).any():
            raise fail(node, key, f"the array's values are too large for {dtype}")
        return out


def pair(node: YNode | None, key: str, what: str) -> tuple[float, float]:
    """Two numbers written as a list."""
    seq = expect_list(node, key, what)
    if len(seq.items) != 2:
        raise fail(seq, key, f"expected {what}, got a list of {len(seq.items)}")
    return expect_number(seq.items[0], key), expect_number(seq.items[1], key)


def parse_shape(node: YNode | None, key: str) -> tuple[int, ...]:
    """A shape: one integer or a list of at most MAX_DIMS non-negative integers."""
    if isinstance(node, Scalar):
        return (expect_int(node, key, minimum=0, maximum=MAX_ELEMENTS),)
    seq = expect_list(node, key, "a shape (an integer or a list of integers)")
    if len(seq.items) > MAX_DIMS:
        raise fail(seq, key, f"the shape has {len(seq.items)} dimensions; the limit is "
                             f"{MAX_DIMS}")
    return tuple(expect_int(item, key, minimum=0, maximum=MAX_ELEMENTS) for item in seq.items)
