"""Graph data: ops, the tensors they output, variables, and op construction.

Most ops compute their value once when they are built (that gives shapes and
dtypes for free). Elementwise ops on float tensors (make_elementwise) do not:
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
from . import budget as budgets
from . import origins
from .registry import _scopes, claim_override

_uids = itertools.count()


def uid_mark() -> int:
    """A uid below every op and tensor built from now on: what existed before a point."""
    return next(_uids)


class State:
    """Global graph state: bumps when a variable changes, so cached values go stale."""

    version = 0


_NO_ATTRS: dict = {}  # shared by ops without attributes (nothing writes an op's attrs)
_new = object.__new__


class Op:
    """One op application: its type, inputs, attributes, forward kernel and outputs.

    `output` is the (first) output; `multi` holds every output of an op that has several and
    is None for the usual one-output op, which so keeps no outputs tuple: a graph of n ops
    leaves n fewer objects for the cyclic garbage collector to traverse on every full pass
    (most of a long forward's time when a large library such as torch is loaded beside it).
    `outputs` gives the tuple either way.
    """

    __slots__ = ("type", "inputs", "attrs", "kernel", "output", "multi", "override", "uid",
                 "origin")

    def __init__(self, type_: str, inputs: tuple, attrs: dict, kernel: Callable | None) -> None:
        self.type = type_
        self.inputs = inputs
        self.attrs = attrs
        self.kernel = kernel
        self.output: Tensor | None = None
        self.multi: tuple[Tensor, ...] | None = ()  # no outputs yet (set_outputs gives them)
        self.override: str | None = None  # named gradient from gradient_override_map
        self.uid = next(_uids)
        # opaque: where the caller says this op comes from
        self.origin = origins.local.current if origins.is_set else None

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        multi = self.multi
        return (self.output,) if multi is None else multi

    def set_outputs(self, outputs: tuple[Tensor, ...]) -> None:
        if len(outputs) == 1:
            self.output, self.multi = outputs[0], None
        else:
            self.output, self.multi = (outputs[0] if outputs else None), outputs

    @property
    def name(self) -> str:
        return f"{self.type}_{self.uid}"

    def get_attr(self, name: str):
        try:
            return self.attrs[name]
        except KeyError:
            raise GraphError(f"op {self.type!r} has no attribute {name!r}; it has "
                             f"{sorted(self.attrs) or 'none'}") from None

    def __repr__(self) -> str:
        return f"<Op {self.name} inputs={[t.name for t in self.inputs]}>"


class Tensor:
    """One output of an op: a node of the graph with a known shape and dtype."""

    __slots__ = ("op", "index", "shape", "dtype", "_value", "_version", "label", "uid",
                 "__weakref__")
    __array_priority__ = 1000  # numpy defers to our operators: ndarray * Tensor -> Tensor

    def __init__(self, op: Op, index: int, value) -> None:
        self.op = op
        self.index = index
        if not hasattr(value, "dtype"):  # a kernel returned a Python number or list
            value = np.asarray(value)
        self.shape: tuple[int, ...] = value.shape
        self.dtype: np.dtype = value.dtype
        self._value = value
        self._version = State.version
        self.label: str | None = None
        self.uid = next(_uids)

    @property
    def name(self) -> str:
        return self.label or (self.op.name if self.index == 0 else f"{self.op.name}:{self.index}")

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
    if value is None or (t._version != State.version and t.op.inputs):
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
        return not u.op.inputs or (u._value is not None and u._version == version)

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


def make_op(type_: str, kernel: Callable, inputs: Sequence[Tensor], attrs: dict | None = None,
            n_outputs: int = 1) -> Op:
    """Build an op, run its kernel once on the current values and create its outputs."""
    op = Op(type_, tuple(inputs), attrs or {}, kernel)
    budget = budgets._active
    if budget is not None:  # before the kernel allocates anything
        budget.admit(type_, [t.shape for t in op.inputs], [t.dtype for t in op.inputs], op.attrs)
    values = [current_value(t) for t in op.inputs]
    try:
        with np.errstate(all="ignore"):
            result = kernel(*values)
    except (ValueError, TypeError, IndexError) as exc:
        shapes = ", ".join(f"{t.shape} {t.dtype}" for t in op.inputs)
        raise GraphError(f"op {type_!r} cannot run on inputs of shape {shapes}: {exc}") from None
    if budget is not None:
        budget.spend(result if n_outputs > 1 else (result,), values)
    values = result if n_outputs > 1 else (result,)
    if n_outputs > 1 and len(values) != n_outputs:
        raise GraphError(f"op {type_!r} returned {len(values)} outputs, expected {n_outputs}")
    op.set_outputs(tuple(Tensor(op, i, v) for i, v in enumerate(values)))
    op.override = claim_override(op) if _scopes.stack else None
    return op


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
            dtype = _RESULT_DTYPES[key] = _result_dtype(kernel, key[1:])
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
    # Op.__init__ and Tensor.__init__ written out, without their calls (the build's hot path),
    # and here rather than in make_lazy: one Python frame fewer per elementwise op
    op = _new(Op)
    op.type, op.inputs, op.attrs, op.kernel = type_, inputs, attrs, kernel
    op.override, op.uid = None, next(_uids)
    op.origin = origins.local.current if origins.is_set else None
    out = _new(Tensor)
    out.op, out.index, out.shape, out.dtype, out._value = op, 0, shape, dtype, None
    # uids key tensors in some dicts and ops in others, never both: an op's only output
    # can share its number (one int object fewer per op)
    out._version, out.label, out.uid = State.version, None, op.uid
    op.output, op.multi = out, None
    if _scopes.stack:
        op.override = claim_override(op)
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
    op = Op(kind, (), {}, None)
    cls = Variable if kind == "variable" else Tensor
    tensor = cls(op, 0, array[()] if array.ndim == 0 else array)
    if cls is Variable:
        tensor.trainable = trainable
    tensor.label = name
    op.output, op.multi = tensor, None
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


def walk_ops(tensors: Sequence[Tensor], stop: Callable[[Tensor], bool] | None = None,
             stop_ids: set | frozenset = frozenset()) -> list[Op]:
    """Ops the tensors depend on, in topological order, without recursion.

    A tensor for which stop() is true, or whose uid is in stop_ids (the cheaper
    form: no call per tensor), is treated as a leaf: its op is not entered.
    """
    order: list[Op] = []
    seen: set[int] = set()
    for t in tensors:
        if (stop(t) if stop else t.uid in stop_ids) or t.op.uid in seen:
            continue
        seen.add(t.op.uid)
        stack = [(t.op, iter(t.op.inputs))]
        while stack:  # each op resumes its inputs where it left them: no re-pushed tuples
            op, children = stack[-1]
            for child in children:
                if child.op.uid not in seen and not (stop(child) if stop else
                                                     child.uid in stop_ids):
                    seen.add(child.op.uid)
                    stack.append((child.op, iter(child.op.inputs)))
                    break
            else:
                stack.pop()
                order.append(op)
    return order
