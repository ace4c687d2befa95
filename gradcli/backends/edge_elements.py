"""Which elements of a differentiated input a framework's edge note is about.

A note's check says where, on the op's inputs, the framework's own gradient differs from
TensorFlow's (sqrt at x <= 0, pow with x < 0, ...), and on which of those inputs. The
difference is born in that op's backward at those elements, so it exists only when the
output's gradient reaches the op's results (`receivers`: not under stop_gradient, not inside
a function or override whose own gradient replaces the op's), and travels back to the input
along the path the inspecting build recorded (`reach`). An elementwise op (broadcasting
included) carries it element by element; any other op (a reduction, matmul, softmax, a
reshape, an override's or a function's own gradient) may spread it over every element of its
inputs, so past such an op every element counts.

What this does not promise: the mask over-approximates where a non-elementwise op lies on the
path (every element of the input, though the difference may land on few), and a note on a
pair says only that its op's backward can change that gradient there, not that it explains
the gap compare sees; compare also requires the gap's kind (NaN or infinity on one side) and
the run (the note's own) to match. A difference that reaches no element gives no mask, and
then the note is about no element of that input.

Written here rather than with the framework's vjp because the inspecting build is a plain
forward (no tape to differentiate), and the structural walk needs no second build.
"""
from __future__ import annotations

import numpy as np

from ..ops.kernels import sum_to_axes

# Elementwise in every input (after broadcasting); the unary and binary families are, but these
NOT_ELEMENTWISE = frozenset({"matmul", "softmax", "log_softmax"})
ELEMENTWISE_CORE = frozenset({"clip", "where", "cast", "stop_gradient"})


def is_elementwise(spec) -> bool:
    """Whether output element i depends only on element i of each (broadcast) input."""
    if spec.name in NOT_ELEMENTWISE:
        return False
    return spec.family in ("unary", "binary") or spec.name in ELEMENTWISE_CORE


def on_inputs(where, shapes: list, elementwise: bool) -> list:
    """The note's elements on each of the op's inputs: `where` (over the broadcast shape) summed
    down to each input; every element when the op is not elementwise or `where` has no place."""
    if elementwise:
        try:
            full = np.broadcast_to(np.asarray(where, dtype=bool), np.broadcast_shapes(*shapes))
            return [_reduce(full, s) for s in shapes]
        except ValueError:  # a check that gave no elementwise answer: every element
            pass
    return [np.ones(s, dtype=bool) for s in shapes]


def receivers(graph, y: int) -> set:
    """The tensors (by id) that a gradient of tensor y reaches going back through the recorded
    graph, only into the inputs each op's pattern lets a gradient into."""
    reached = {y}
    for ins, outs, _, pattern in reversed(graph.nodes):
        if any(o in reached for o in outs):
            reached.update(i for i, flows in zip(ins, pattern) if flows)
    return reached


def reach(graph, start: dict, x: int, shape_of, elementwise: set) -> np.ndarray | None:
    """The elements of tensor x (by id) that a gradient difference at `start` ({tensor id: bool
    mask}) reaches going back through the recorded graph; None when it reaches no element.

    shape_of(id) is a tensor's shape; `elementwise` holds the output-id tuples of elementwise
    nodes."""
    masks = {k: v.copy() for k, v in start.items()}
    for ins, outs, _, pattern in reversed(graph.nodes):
        hit = [masks[o] for o in outs if o in masks]
        if not hit or not any(m.any() for m in hit):
            continue
        carries = outs in elementwise and len(outs) == 1
        for i, flows in zip(ins, pattern):
            shape = shape_of(i)
            if not flows or shape is None:
                continue
            m = _reduce(np.broadcast_to(hit[0], np.broadcast_shapes(hit[0].shape, shape)), shape) \
                if carries else np.ones(shape, dtype=bool)
            masks[i] = masks[i] | m if i in masks else m
    mask = masks.get(x)
    return mask if mask is not None and mask.any() else None


def _reduce(mask: np.ndarray, shape: tuple) -> np.ndarray:
    """A mask over a broadcast shape brought down to one input's shape: any element it fed."""
    axes = sum_to_axes(tuple(mask.shape), tuple(shape))
    out = mask.any(axis=axes, keepdims=True) if axes else mask
    return np.array(out.reshape(shape), dtype=bool)
