"""Building ops: make_op (runs the kernel), make_elementwise and make_lazy (shape and dtype
known without running it), and leaves (constants, variables).

A one-output op is built as its own output, a Tensor whose op fields are set
(graph._OpFields): one object per op for the garbage collector, where there were three.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import GraphError
from ..ops.table import refused_dtype
from . import budget as budgets
from . import origins
from .graph import _NO_ATTRS, Op, State, Tensor, Variable, _init_op, _new, _uids, current_value
from .registry import _scopes, claim_override


def make_op(type_: str, kernel: Callable, inputs: Sequence[Tensor], attrs: dict | None = None,
            n_outputs: int = 1) -> Op | Tensor:
    """Build an op, run its kernel once on the current values and create its outputs.

    A one-output op is returned as its own output (a Tensor: make_op(...).output is itself)."""
    inputs = tuple(inputs)
    if n_outputs == 1:
        op = _new(Tensor)
        _init_op(op, type_, inputs, attrs or {}, kernel)
    else:
        op = Op(type_, inputs, attrs or {}, kernel)
    budget = budgets._active
    if budget is not None:  # before the kernel allocates anything
        budget.admit(type_, [t.shape for t in inputs], [t.dtype for t in inputs], op.attrs)
    values = [current_value(t) for t in inputs]
    try:
        with np.errstate(all="ignore"):
            result = kernel(*values)
    except (ValueError, TypeError, IndexError) as exc:
        raise cannot_run(type_, inputs, exc) from None
    if budget is not None:
        budget.spend(result if n_outputs > 1 else (result,), values)
    if n_outputs == 1:
        op._op, op.index, op.label, op.multi = None, 0, None, None
        op._hold(result)
    else:
        if len(result) != n_outputs:
            raise GraphError(f"op {type_!r} returned {len(result)} outputs, expected {n_outputs}")
        op.set_outputs(tuple(Tensor(op, i, v) for i, v in enumerate(result)))
    if _scopes.stack:
        op.override = claim_override(op)
    return op


def cannot_run(type_: str, inputs, why) -> GraphError:
    """The error of an op that cannot run on these inputs: a kernel's, or a refused dtype's."""
    shapes = ", ".join(f"{t.shape} {t.dtype}" for t in inputs)
    return GraphError(f"op {type_!r} cannot run on inputs of shape {shapes}: {why}")


def refuse_dtype(type_: str, x: Tensor) -> None:
    """Refuse, as the op is built, an input dtype the op table says type_ does not take
    (ops/table.refused_dtype: an integer softmax, a boolean max): once per build, so that its
    kernel, run on every replay, only computes. A float input is never refused."""
    if x.dtype.kind != "f":
        why = refused_dtype(type_, x.dtype.name)
        if why is not None:
            raise cannot_run(type_, (x,), why)


# (op type, input dtypes) -> the result's dtype, or False where the op runs at build instead
_RESULT_DTYPES: dict[tuple, object] = {}


def make_elementwise(type_: str, kernel: Callable, inputs: tuple, attrs: dict = _NO_ATTRS,
                     shape: tuple | None = None, dtype: np.dtype | None = None) -> Tensor:
    """An elementwise op's output: shape and dtype from the inputs, value computed on demand.

    For float inputs only, outside a memory budget: there a kernel cannot fail on values
    under errstate, so nothing is lost by not running it now. Integer and boolean inputs (int ** -1
    raises) and inputs that do not broadcast (the kernel's own error says why) go
    through make_op, which runs the kernel. A caller that gives shape and dtype (make_lazy)
    skips all of that.
    """
    if shape is None:
        first = inputs[0]
        if len(inputs) == 1:
            key = (type_, first.dtype)
        elif len(inputs) == 2:
            key = (type_, first.dtype, inputs[1].dtype)
        else:
            key = (type_, *[t.dtype for t in inputs])
        dtype = _RESULT_DTYPES.get(key)
        if dtype is None:
            dtype = elementwise_dtype(type_, kernel, key[1:])
        if dtype is False:
            return make_op(type_, kernel, inputs).output
        shape = first.shape
        for t in inputs:
            s = t.shape
            if s and s != shape:  # a 0-d input (y * 0.999) leaves the shape as it is
                shape = _broadcast(inputs)
                if shape is None:
                    return make_op(type_, kernel, inputs).output
                break
        if budgets._active is not None:
            # Under a memory budget (every CLI run) values are computed at build as before: the
            # ledger counts what is held, and an allocation that fails names the op that made it.
            return make_op(type_, kernel, inputs).output
    # the op that is its own output (Tensor), _init_op written out without its call: the
    # build's hot path
    out = _new(Tensor)
    out.type, out.attrs, out.kernel = type_, attrs, kernel
    if len(inputs) == 2:  # the common case first: fewer steps than the general one
        out.in1, out.in2 = inputs
        out.many = None
    else:
        out.in1 = inputs[0]
        out.in2 = inputs[1] if len(inputs) > 1 else None
        out.many = tuple(inputs) if len(inputs) > 2 else None
    out.uid = next(_uids)
    out.origin = origins.local.current if origins.is_set else None
    out._op, out.index, out.shape, out.dtype, out._value = None, 0, shape, dtype, None
    out._version, out.label, out.multi = State.version, None, None
    out.override = claim_override(out) if _scopes.stack else None
    return out


def make_lazy(type_: str, kernel: Callable, inputs: tuple, attrs: dict, shape: tuple,
              dtype: np.dtype) -> Tensor:
    """An op whose caller knows its output's shape and dtype: its kernel is not run now, and
    its value is computed only if asked for (refresh). The caller has checked that the
    kernel cannot fail on these inputs."""
    return make_elementwise(type_, kernel, inputs, attrs, shape, dtype)


def _broadcast(inputs: tuple):
    """The inputs' broadcast shape, as one of their own shape tuples where it is one of them
    (a chain of `y * 0.999` shares y's tuple), or None if they do not broadcast."""
    shape = ()
    for t in inputs:
        s = t.shape
        if s and s != shape:
            if shape:
                return _broadcast_apart([u.shape for u in inputs])
            shape = s
    return shape


def _broadcast_apart(shapes: list):
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return None
    return next((s for s in shapes if s == shape), shape)


def elementwise_dtype(type_: str, kernel: Callable, dtypes: tuple):
    """The dtype of an elementwise op's result on inputs of these dtypes, or False where it
    runs at build (make_op): integer and boolean inputs. Found once per op type and dtypes."""
    key = (type_, *dtypes)
    dtype = _RESULT_DTYPES.get(key)
    if dtype is None:
        dtype = _RESULT_DTYPES[key] = _result_dtype(kernel, dtypes)
    return dtype


def _result_dtype(kernel: Callable, dtypes: tuple):
    if any(d.kind != "f" for d in dtypes if d.kind != "b") or all(d.kind == "b" for d in dtypes):
        return False
    try:
        with np.errstate(all="ignore"):
            return np.asarray(kernel(*[np.zeros((), d) for d in dtypes])).dtype
    except (ValueError, TypeError, IndexError):
        return False


def leaf(value, kind: str, dtype=None, name: str | None = None, trainable: bool = False) -> Tensor:
    """A constant or variable leaf holding value in the requested dtype."""
    array = as_array(value, dtype)
    cls = Variable if kind == "variable" else Tensor
    tensor = _new(cls)  # its own op, as a computed one-output op is
    _init_op(tensor, kind, (), {}, None)
    tensor._op, tensor.index, tensor.label, tensor.multi = None, 0, name, None
    tensor._hold(array[()] if array.ndim == 0 else array)
    if cls is Variable:
        tensor.trainable = trainable
    return tensor


def as_array(value, dtype=None) -> np.ndarray:
    """Convert user data: Python numbers and int lists become float64 unless a dtype is given."""
    if isinstance(value, Tensor):
        raise GraphError("expected a value, got a tensor; use it directly in ops instead")
    if dtype is not None:
        return np.array(value, dtype=np.dtype(dtype))
    array = np.array(value)
    if array.dtype.kind in "iub" and not isinstance(value, np.ndarray):
        return array.astype(np.float64) if array.dtype.kind != "b" else array
    if array.dtype.kind not in "fiub":
        raise GraphError(f"cannot make a tensor from {type(value).__name__} values")
    return array
