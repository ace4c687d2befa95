"""How the eager backends take an op's arguments: the spec's parameters bound to tensors and
attributes, bare numbers made tensors of the dtype beside them, the dtypes the op table
refuses refused (TensorFlow's: one dtype for the operands, no boolean sum, no integer
softmax), and attributes normalized to the one form every framework's kit is written for
(axes, shapes, dtypes, index items). Every eager op is bound here, so each rule is held
once for torch, jax and tensorflow; the numpy core's builders ask the same table as they
build (core/building.refuse_dtype).

A mixin of EagerBuilder (eager.py): it reads the builder's kit, float dtype and `_made`.
"""
from __future__ import annotations

import numpy as np

from ..core import shapes  # axes and index items, normalized as the core does
from ..core.ops_math import no_float_number, number_dtype  # the rules for bare numbers
from ..errors import GraphError
from ..ops.table import (
    DTYPE_REFUSING,
    NO_BOOLEAN_KERNEL,
    boolean_arithmetic,
    mixed_dtypes,
    non_integer_indices,
    refused_dtype,
    same_dtype_params,
)


class Arguments:
    """Binding and normalizing an op's arguments, for EagerBuilder."""

    def _bind_args(self, spec, args, kwargs):
        values = dict(spec.defaults)
        values.update(zip(spec.params, args))
        values.update(kwargs)
        shared = same_dtype_params(spec)
        if spec.variadic:
            items = values[spec.params[0]]
            items = list(items) if isinstance(items, (list, tuple)) else [items]
            like = next((v for v in items if self.kit.is_tensor(v)), None)
            self._no_float_number(spec.name, items, like)
            inputs = [self._convert(v, like) for v in items]
            attrs = {p: values[p] for p in spec.params[1:]}
        else:
            raw = [values[p] for p in spec.tensor_params]
            tensors = [v for v in raw if self.kit.is_tensor(v)]  # a float one sets the dtype,
            like = next((v for v in tensors if self.is_float(v)), None)  # else an integer one
            like = like if like is not None else next(
                (v for v in tensors if self.kit.dtype_name(v) != "bool"), None)
            if shared:  # TensorFlow converts a number to the tensor's dtype: no float to an int
                operands = [values[p] for p in shared]
                self._no_float_number(spec.name, operands, next(
                    (v for v in operands if self.kit.is_tensor(v)), None))
            inputs = [self._convert(v, like) for v in raw]
            attrs = {p: values[p] for p in spec.params if p not in spec.tensor_params}
        if shared:  # TensorFlow's rule on every framework: one dtype, no promotion
            same = inputs if spec.variadic else [
                t for p, t in zip(spec.tensor_params, inputs) if p in shared]
            dtypes = list(dict.fromkeys(self.kit.dtype_name(t) for t in same))
            if len(dtypes) > 1:
                raise GraphError("%s; %s" % mixed_dtypes(spec.name, dtypes))
        if spec.name in NO_BOOLEAN_KERNEL and all(
                self.kit.dtype_name(t) == "bool" for t in inputs):  # True + True, -c: as the core
            raise GraphError("%s; %s" % boolean_arithmetic(spec.name, len(inputs)))
        if spec.name in DTYPE_REFUSING:  # before a kit's shortcut (no axis: a copy) lets it by
            why = refused_dtype(spec.name, self.kit.dtype_name(inputs[0]))
            if why is not None:
                raise GraphError(why)
        return inputs, self._normalized(spec, inputs, attrs)

    def _no_float_number(self, name: str, values, like) -> None:
        """A float number beside an integer tensor: refused by the core's rule (no_float_number)."""
        if like is not None:
            for v in values:
                if not self.kit.is_tensor(v):
                    no_float_number(name, v, self._dt(like))

    def _convert(self, value, like):
        if self.kit.is_tensor(value):
            return value
        array = np.asarray(value)
        if array.dtype.kind in "iuf":
            beside = number_dtype(array, self._dt(like) if like is not None else None)
            array = array.astype(beside if beside is not None else self.dtype)
        elif array.dtype.kind != "b":
            raise GraphError(f"cannot make a tensor from {type(value).__name__} values")
        return self._made(self.kit.constant(array))

    def _dt(self, t) -> np.dtype:
        return np.dtype(self.kit.dtype_name(t))

    def _normalized(self, spec, inputs, attrs):
        kit, name = self.kit, spec.name
        if spec.family == "reduction":
            attrs["axis"] = shapes.axes(attrs["axis"], kit.shape(inputs[0]))
            attrs["keepdims"] = bool(attrs["keepdims"])
        elif name == "transpose":
            attrs["axes"] = shapes.permutation(attrs["axes"], len(kit.shape(inputs[0])))
        elif name == "reshape":
            attrs["shape"] = shapes.as_shape(attrs["shape"])
        elif name == "cast":
            attrs["dtype"] = np.dtype(str(attrs["dtype"])).name
        elif name == "one_hot":
            if np.dtype(kit.dtype_name(inputs[0])).kind not in "iu":  # as the core: no NodeDef
                raise GraphError(non_integer_indices("one_hot", kit.dtype_name(inputs[0])))
            attrs["depth"] = int(attrs["depth"])
            attrs["dtype"] = self.dtype.name
        elif spec.family == "along_axis":
            attrs["axis"] = shapes.one_axis(attrs["axis"], kit.shape(inputs[0]))
        elif name == "getitem":
            shape = kit.shape(inputs[0])
            attrs["index"] = clamped(shapes.index_items(attrs["index"], shape), shape)
        return attrs


def clamped(items: tuple, shape: tuple) -> tuple:
    """Index items with every slice's start, stop and step brought within its dimension, the
    same selection: numpy clamps bounds itself, but XLA overflows int64 on x[::2**63-1] and
    aborts the process (SIGABRT), so the frameworks never see a bound past the dimension.

    Bounds go to [-dim - 1, dim] (past either end reads the same), a step to [-dim, dim]
    (a step past the dimension takes one element either way); items already fit the shape.
    """
    if not any(isinstance(item, slice) for item in items):
        return items
    out, axis = [], 0
    for i, item in enumerate(items):
        if item is Ellipsis:  # the items after it index the last dimensions
            axis = len(shape) - sum(x is not None for x in items[i + 1:])
        elif isinstance(item, slice):
            out.append(_clamped_slice(item, shape[axis]))
            axis += 1
            continue
        elif item is not None:
            axis += 1
        out.append(item)
    return tuple(out)


def _clamped_slice(item: slice, dim: int) -> slice:
    def bound(v):
        return v if v is None else min(max(int(v), -dim - 1), dim)
    step = item.step if item.step is None else min(max(int(item.step), -max(dim, 1)), max(dim, 1))
    return slice(bound(item.start), bound(item.stop), step)

