"""Graph data: ops, the tensors they output, variables, and their values on demand.

Ops are built by building.py. Most compute their value once when they are built (that gives
shapes and dtypes for free). Elementwise ops on float tensors (make_elementwise) do not:
their shape is the inputs' broadcast and their dtype the kernel's on 0-d stand-ins,
and their value is computed only if something asks for it (Tensor.numpy(), an op
that runs its kernel at build); a chain of them holds no values, only its graph.
Evaluation replays compiled schedules instead.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, Sequence

import numpy as np

from ..errors import GraphError
from . import origins

_uids = itertools.count()


def uid_mark() -> int:
    """A uid below every op and tensor built from now on: what existed before a point."""
    return next(_uids)


class State:
    """Global graph state: bumps when a variable changes, so cached values go stale."""

    version = 0


_NO_ATTRS: dict = {}  # shared by ops without attributes (nothing writes an op's attrs)
_new = object.__new__


class _OpFields:
    """What an op is: its type, inputs, attributes, forward kernel and outputs.

    Shared by Op and Tensor: a one-output op (a leaf too) and its output are one object, a
    Tensor that is its own op (see Tensor). Inputs are held without a tuple: `in1` and `in2` (None
    where the op has fewer), and `many`, the tuple of an op with three or more (else None);
    `inputs` gives the tuple either way. `multi` is None exactly when the op is its own (one)
    output, a Tensor; an Op holds the tuple of its outputs there. `output` is the (first)
    output and `outputs` the tuple, either way.

    Why: every object a graph keeps is one more for Python's cyclic garbage collector, whose
    passes run while the user builds a forward op by op (a library may not pause it there) and
    are most of a long forward's time when a large library such as torch is loaded beside it.
    A binary op now leaves one tracked object where it left three (op, output, inputs tuple).
    """

    __slots__ = ("type", "in1", "in2", "many", "attrs", "kernel", "multi",
                 "override", "uid", "origin")

    @property
    def inputs(self) -> tuple:
        many = self.many
        if many is not None:
            return many
        in2 = self.in2
        if in2 is not None:
            return (self.in1, in2)
        in1 = self.in1
        return () if in1 is None else (in1,)

    @property
    def outputs(self) -> tuple:
        multi = self.multi
        return (self,) if multi is None else multi

    def get_attr(self, name: str):
        try:
            return self.attrs[name]
        except KeyError:
            raise GraphError(f"op {self.type!r} has no attribute {name!r}; it has "
                             f"{sorted(self.attrs) or 'none'}") from None


def _init_op(op: _OpFields, type_: str, inputs: tuple, attrs: dict, kernel) -> None:
    op.type, op.attrs, op.kernel, op.override = type_, attrs, kernel, None
    n = len(inputs)
    op.in1 = inputs[0] if n else None
    op.in2 = inputs[1] if n > 1 else None
    op.many = inputs if n > 2 else None
    op.uid = next(_uids)
    # opaque: where the caller says this op comes from
    op.origin = origins.local.current if origins.is_set else None


class Op(_OpFields):
    """An op with several outputs (set_outputs): Tensors whose `op` is this."""

    __slots__ = ("output",)

    def __init__(self, type_: str, inputs: tuple, attrs: dict, kernel: Callable | None) -> None:
        _init_op(self, type_, tuple(inputs), attrs, kernel)
        self.output: Tensor | None = None
        self.multi: tuple[Tensor, ...] = ()  # no outputs yet (set_outputs gives them)

    def set_outputs(self, outputs: tuple[Tensor, ...]) -> None:
        self.output, self.multi = (outputs[0] if outputs else None), tuple(outputs)

    @property
    def name(self) -> str:
        return f"{self.type}_{self.uid}"

    def __repr__(self) -> str:
        return f"<Op {self.name} inputs={[t.name for t in self.inputs]}>"


class Tensor(_OpFields):
    """A node of the graph with a known shape and dtype: an op's output.

    The output of a one-output op is that op too: `t.op is t`, and the op's fields (type,
    inputs, attrs, kernel, ...) are its own, so `t.op.inputs` reads as before; a leaf
    (constant, variable) is its own op of type "constant" or "variable", without inputs. Only
    the outputs of an op with several have a separate Op, in `_op` (their own op fields are
    unset). Hot loops meet one class of op (a Tensor), so Python's attribute caches stay
    specialized; they read `t._op or t` (no call) where others read `t.op`.

    Why `_op` is None rather than the tensor itself: a tensor that refers to itself is a
    reference cycle, so a graph the user drops would wait for the cyclic garbage collector,
    whose pass then frees it in the middle of whatever runs next (the next graph's build).
    Without the cycle, dropping the last reference frees the graph at once.
    """

    __slots__ = ("_op", "index", "shape", "dtype", "_value", "_version", "label", "__weakref__")
    __array_priority__ = 1000  # numpy defers to our operators: ndarray * Tensor -> Tensor

    def __init__(self, op: Op, index: int, value) -> None:
        self._op = op
        self.index = index
        self._hold(value)
        self.label: str | None = None
        self.uid = next(_uids)

    @property
    def op(self) -> "Tensor | Op":
        op = self._op
        return self if op is None else op

    @property
    def output(self) -> "Tensor":
        return self

    def _hold(self, value) -> None:
        if not hasattr(value, "dtype"):  # a kernel returned a Python number or list
            value = np.asarray(value)
        self.shape: tuple[int, ...] = value.shape
        self.dtype: np.dtype = value.dtype
        self._value = value
        self._version = State.version

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        op = self._op
        if op is None:
            return f"{self.type}_{self.uid}"
        return op.name if self.index == 0 else f"{op.name}:{self.index}"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def differentiable(self) -> bool:
        return self.dtype.kind == "f"

    def numpy(self):
        """The tensor's value under the current variable values."""
        value = current_value(self)
        return np.array(value) if isinstance(value, np.ndarray) else value

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def __float__(self) -> float:
        return float(self.numpy())

    def __bool__(self) -> bool:
        raise GraphError("a tensor has no truth value while the graph is built; "
                         "use gc.where(cond, a, b) to choose between tensors")

    def __len__(self) -> int:
        if not self.shape:
            raise GraphError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<Tensor {self.name} shape={self.shape} dtype={self.dtype}>"

    # Operators live in ops.py (attached there) so that this file stays about data.


class Variable(Tensor):
    """A leaf whose value can change between evaluations (assign)."""

    __slots__ = ("trainable",)

    def assign(self, value) -> "Variable":
        # an array of its own dtype and (non-0-d) shape is kept as it is: what asarray and the
        # checks below give, without them (a training step assigns several every step)
        if type(value) is np.ndarray and value.dtype == self.dtype and value.shape == self.shape \
                and self.shape:
            self._value = value
            State.version += 1
            self._version = State.version
            return self
        new = np.asarray(value, dtype=self.dtype)
        if new.shape != self.shape:
            raise GraphError(f"cannot assign a value of shape {new.shape} to variable "
                             f"{self.name!r} of shape {self.shape}; the graph was built "
                             "for that shape")
        self._value = new[()] if new.ndim == 0 else new
        State.version += 1
        self._version = State.version
        return self

    def numpy(self):
        value = self._value
        return np.array(value) if isinstance(value, np.ndarray) else value


def assign_all(variables, values) -> None:
    """var.assign(value) for each pair, in one call and one version bump where the values are
    arrays of their variable's own dtype and non-0-d shape (kept as they are, as assign does):
    a training step's update assigns every variable at once."""
    State.version += 1  # first: whatever was computed before any of these values is stale
    version = State.version
    for var, value in zip(variables, values):
        if type(value) is np.ndarray and value.dtype == var.dtype and value.shape == var.shape \
                and var.shape:
            var._value, var._version = value, version
        else:
            var.assign(value)  # cast and checked, or refused


def current_value(t: Tensor):
    """The tensor's value, computed if it was not kept or a variable changed since."""
    value = t._value
    if value is None or (t._version != State.version and (t._op or t).in1 is not None):
        return refresh(t)
    return value


def refresh(t: Tensor):
    """Compute t's value from the nearest tensors that hold a current one, and keep it.

    Stale values that were kept (a variable changed since) are recomputed and kept,
    each once: building ops after an assign reads every input's value, and
    recomputing each one from the leaves would make building quadratic. Values
    that were never kept (elementwise ops) are computed in passing and dropped as
    soon as nothing later in the pass reads them; only t's is kept.
    """
    version = State.version

    def held(u: Tensor) -> bool:
        return (u._op or u).in1 is None or (u._value is not None and u._version == version)

    ops = walk_ops([t], stop=held)
    uses: dict[int, int] = {}
    for op in ops:
        for u in op.inputs:
            uses[u.uid] = uses.get(u.uid, 0) + 1
    passing: dict[int, object] = {}
    with np.errstate(all="ignore"):
        for op in ops:
            args = [passing.get(u.uid, u._value) for u in op.inputs]
            for u in op.inputs:  # drop what no later op of the pass reads
                uses[u.uid] -= 1
                if not uses[u.uid]:
                    passing.pop(u.uid, None)
            result = op.kernel(*args)
            outs = op.outputs
            for out, value in zip(outs, result if len(outs) > 1 else (result,)):
                if out._value is not None or out is t:
                    out._value, out._version = value, version
                elif out.uid in uses:
                    passing[out.uid] = value
    return t._value


def walk_ops(tensors: Sequence[Tensor], stop: Callable[[Tensor], bool] | None = None,
             stop_ids: set | frozenset = frozenset()) -> list[Op]:
    """Ops the tensors depend on, in topological order, without recursion.

    A tensor for which stop() is true, or whose uid is in stop_ids (the cheaper
    form: no call per tensor), is treated as a leaf: its op is not entered.
    """
    order: list[Op] = []
    seen: set[int] = set()
    for t in tensors:
        op = t._op or t
        if (stop(t) if stop else t.uid in stop_ids) or op.uid in seen:
            continue
        seen.add(op.uid)
        stack = [(op, iter(op.inputs))]
        while stack:  # each op resumes its inputs where it left them: no re-pushed tuples
            op, children = stack[-1]
            for child in children:
                cop = child._op or child
                if cop.uid not in seen and not (stop(child) if stop else child.uid in stop_ids):
                    seen.add(cop.uid)
                    stack.append((cop, iter(cop.inputs)))
                    break
            else:
                stack.pop()
                order.append(op)
    return order
