"""The torch backend: the op table in torch ops (its map derived from the table's spellings),
gradient control with torch's own autograd.

Registered gradients, override_map entries and functions run through a
torch.autograd.Function (mark_non_differentiable for integer outputs, the
default materialized zeros for unused ones); stop_gradient is detach; every
gradient is torch.autograd.grad. torch is imported only when the backend is
built.
"""
from __future__ import annotations

import math

import numpy as np

from ..ops.kernels import (
    check_label_dtype,
    check_labels,
    empty_identity,
)
from . import availability
from .kit import NONFINITE, clip_as_tensorflow, edge_note, edge_notes, either, tie_note, unavailable
from .opmap import derive

NAME = "torch"


def available() -> tuple[bool, str]:
    return availability(NAME)  # read in backends/__init__.py, without importing this module


def build(experiment):
    from .eager_program import EagerProgram
    return EagerProgram(experiment, TorchKit())


def _edge_notes() -> dict:
    notes = edge_notes("torch")
    notes["pow"] = either(notes["pow"], edge_note(  # about the base's gradient
        "torch", "pow(x, y)", "with y = 0 and x = 0 or NaN", "0 in x (torch special-cases y = 0)",
        "NaN (0 * x^-1)", lambda x, y, literal: (y == 0) & ((x == 0) | np.isnan(x)), NONFINITE,
        (0,)), edge_note(  # about the exponent's
        "torch", "pow(x, y)", "with x = 0 and y < 0", "+-inf in y", "NaN (inf * 0)",
        lambda x, y, literal: (x == 0) & (y < 0) if not literal[1] else False, NONFINITE, (1,)))
    notes["abs"] = edge_note("torch", "abs", "at x NaN", "0", "NaN", lambda x, literal: np.isnan(x),
                              NONFINITE)
    # relu, relu6 and hard_sigmoid at NaN: dy against 0, both numbers (FINITE, the default)
    notes["relu"] = edge_note("torch", "relu", "at x NaN", "dy", "0", lambda x, literal: np.isnan(x))
    notes["sign"] = edge_note("torch", "sign", "at x NaN", "0 and its value 0 too (torch.sign(NaN) "
                              "is 0)", "0 with the value NaN", lambda x, literal: np.isnan(x), NONFINITE)
    notes["softsign"] = edge_note("torch", "softsign", "at x +-inf", "NaN", "0",
                                  lambda x, literal: np.isinf(x), NONFINITE)
    for fn in ("relu6", "hard_sigmoid"):
        notes[fn] = edge_note("torch", fn, "at x NaN", "dy (times 1/6)", "0",
                              lambda x, literal: np.isnan(x))
    notes["logsumexp"] = edge_note(
        "torch", "logsumexp", "of entries beyond 1e4 in size", "exp(x - logsumexp(x)), which loses "
        "the log of the sum to rounding (1 instead of 1/2 at [1e17, 1e17])",
        "exp(x - max) / sum(exp(x - max))", lambda x, literal: np.abs(x[np.isfinite(x)]) > 1e4)
    notes["prod"] = edge_note(
        "torch", "prod", "with an inf or NaN entry or an overflowing product", "NaN in more places",
        "the product of the other entries", lambda x, literal: ~np.isfinite(x).all()
        | ~np.isfinite(np.prod(x)), NONFINITE)
    return notes


class TorchKit:
    """torch tensors and autograd as an eager kit."""

    name = label = "torch"
    unconnected_text = "torch.autograd.grad gives zeros where a custom backward returned them"
    norm_clip_epsilon = 1e-6
    native_clip = "torch.nn.utils.clip_grad_norm_"
    native_adam = "torch.optim.Adam"

    def __init__(self) -> None:
        try:
            import torch
        except ImportError as exc:
            raise unavailable("torch", exc) from None
        self.torch = torch
        self.version = torch.__version__
        self.dtypes = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32,
                       "int64": torch.int64, "bool": torch.bool}
        self.ops = _ops(torch, self.dtypes)
        self.checks = _edge_notes()
        for fn in ("maximum", "minimum"):
            self.checks[fn] = either(tie_note("torch", fn), self.checks[fn])
        self._function = _custom_function(torch)

    def static_conventions(self, experiment) -> list:
        return []

    # ----- tensors -----
    def constant(self, array):
        return self.torch.tensor(np.asarray(array))

    def is_tensor(self, value) -> bool:
        return isinstance(value, self.torch.Tensor)

    def dtype_name(self, t) -> str:
        return str(t.dtype).removeprefix("torch.")

    def shape(self, t) -> tuple:
        return tuple(t.shape)

    def numpy(self, t):
        return t.detach().cpu().numpy().copy()

    def copy(self, t):
        return t.clone()

    def broadcast_to(self, t, shape):
        return t.expand(shape)

    def exact_sqrt(self, t):
        """sqrt correctly rounded, as TensorFlow's (Eigen) is: torch.sqrt goes through MKL's
        vector math, 1 ulp off for ~1% of float64 and ~15% of float32 inputs, which would move
        an Adam step off TensorFlow's bits. Used by the optimizers on detached CPU tensors."""
        return self.torch.from_numpy(np.asarray(np.sqrt(t.numpy())))

    # ----- gradient machinery -----
    def stop_gradient(self, t):
        return t.detach()

    def custom(self, inputs: list, forward, backward) -> tuple:
        outs = self._function.apply(_Payload(forward, backward, len(inputs)), *inputs)
        return outs if isinstance(outs, tuple) else (outs,)

    def gradient(self, build, x):
        """(x as built from, y = build(x), d(sum y)/dx with create_graph: differentiable)."""
        torch = self.torch
        with torch.enable_grad():
            x_in = x if x.requires_grad else x.detach().requires_grad_()
            y = build(x_in)
            g = None
            if y.requires_grad:
                (g,) = torch.autograd.grad(y, x_in, grad_outputs=torch.ones_like(y),
                                           create_graph=True, allow_unused=True)
        return x_in, y, torch.zeros_like(x) if g is None else g

    def differentiate(self, f, sources: list):
        torch = self.torch
        leaves = [s.detach().requires_grad_() for s in sources]
        with torch.enable_grad():
            outs = f(leaves)

        def backward(i: int, seed):
            out = outs[i]
            if not out.requires_grad:
                return [None] * len(leaves)
            return list(torch.autograd.grad(out, leaves, grad_outputs=seed, retain_graph=True,
                                            allow_unused=True))

        return [o.detach() for o in outs], backward


class _Payload:
    """What one custom op application runs forward and backward."""

    __slots__ = ("forward", "backward", "n_inputs")

    def __init__(self, forward, backward, n_inputs: int) -> None:
        self.forward, self.backward, self.n_inputs = forward, backward, n_inputs


def _custom_function(torch):
    class CustomGradient(torch.autograd.Function):
        """Forward: the payload's forward, untracked; backward: the payload's rule."""

        @staticmethod
        def forward(ctx, payload, *inputs):
            outs = payload.forward(*inputs)
            outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
            ctx.mark_non_differentiable(*[o for o in outs if not o.is_floating_point()])
            ctx.payload = payload
            ctx.save_for_backward(*inputs, *outs)
            return outs if len(outs) > 1 else outs[0]

        @staticmethod
        def backward(ctx, *dys):
            saved, n = ctx.saved_tensors, ctx.payload.n_inputs
            grads = ctx.payload.backward(saved[:n], saved[n:], dys)
            return (None, *grads)

    return CustomGradient


def _ops(torch, dtypes) -> dict:
    F = torch.nn.functional

    def dims(x, axis):
        return tuple(range(x.ndim)) if axis is None else axis

    def reduction(fn):
        def run(x, axis=None, keepdims=False):
            d = dims(x, axis)
            return fn(x, axis=d, keepdims=keepdims) if d else x.clone()
        return run

    def prod(x, axis, keepdims):
        for a in sorted(axis, reverse=True):
            x = torch.prod(x, dim=a, keepdim=keepdims, dtype=x.dtype)  # torch widens int32
        return x

    def sum_(x, axis, keepdims):
        if x.is_floating_point():
            return torch.sum(x, dim=axis, keepdim=keepdims)
        return torch.sum(x, dim=axis, keepdim=keepdims, dtype=x.dtype)  # torch widens int32

    def mean(x, axis, keepdims):
        if x.is_floating_point():
            return torch.mean(x, dim=axis, keepdim=keepdims)
        # tf.reduce_mean's integer mean, as the core's kernel (ops/kernels.integer_mean)
        total = torch.sum(x, dim=axis, keepdim=keepdims, dtype=torch.int64)
        count = math.prod(x.shape[a] for a in axis)
        quotient = torch.div(total, count, rounding_mode="trunc") if count else total
        return quotient.to(x.dtype)

    def extreme(op):
        def run(x, axis, keepdims):
            if x.numel():
                return getattr(torch, "a" + op)(x, dim=axis, keepdim=keepdims)
            # empty: TensorFlow's identity where torch.amax fails; the sum keeps x's (empty)
            # gradient connected
            identity = empty_identity(str(x.dtype).removeprefix("torch."), op)
            return x.sum(dim=axis, keepdim=keepdims, dtype=x.dtype) + identity
        return reduction(run)

    def div(x, y):
        if not (x.is_floating_point() or y.is_floating_point()):
            x, y = x.to(torch.float64), y.to(torch.float64)
        return torch.div(x, y)

    def getitem(x, index):
        # torch slices only step forward: a backward slice reads the flipped dimension forward
        items, dim, flips = list(index), 0, []
        for k, item in enumerate(items):
            if item is None:
                continue
            if item is Ellipsis:
                dim = x.ndim - sum(i is not None for i in items[k + 1:])
                continue
            if isinstance(item, slice) and item.step is not None and item.step < 0:
                n, picked = x.shape[dim], range(x.shape[dim])[item]
                items[k] = slice(n - 1 - picked[0], n - picked[-1], -item.step) if picked else slice(0, 0)
                flips.append(dim)
            dim += 1
        x = x.flip(flips) if flips else x
        return x[tuple(torch.as_tensor(i) if isinstance(i, np.ndarray) else i for i in items)]

    def max_with_argmax(x, axis):
        idx = torch.argmax(x, dim=axis)
        return torch.gather(x, axis, idx.unsqueeze(axis)).squeeze(axis), idx

    def sparse_xent(labels, logits):
        # TensorFlow's CPU op refuses labels outside [0, classes); torch.gather would too, but
        # in its own words (and F.cross_entropy silently ignores -100)
        check_label_dtype(str(labels.dtype).removeprefix("torch."),
                          not labels.dtype.is_floating_point and labels.dtype != torch.bool
                          and not labels.dtype.is_complex,
                          labels.detach().cpu().numpy() if labels.dtype.is_floating_point
                          else None)
        if labels.numel():
            check_labels(int(labels.min()), int(labels.max()), logits.shape[-1])
        picked = torch.gather(torch.log_softmax(logits, -1), -1, labels.long().unsqueeze(-1))
        return -picked.squeeze(-1)

    # everything else is derived from the op table's spellings (opmap.derive)
    own = {
        "softplus": lambda x: torch.logaddexp(x, torch.zeros_like(x)), "div": div,
        # TensorFlow's convention (ties send the whole gradient to x), not torch.maximum's halves
        "maximum": lambda x, y: torch.where((x >= y) | torch.isnan(x), x, y),
        "minimum": lambda x, y: torch.where((x <= y) | torch.isnan(x), x, y),
        # TensorFlow's clip_by_value (torch.clamp gives max where lo > hi)
        "clip": lambda x, lo, hi: clip_as_tensorflow(x, lo, hi, where=torch.where, isnan=torch.isnan,
                                                     stop=torch.Tensor.detach, full_like=torch.full_like),
        "cast": lambda x, dtype: x.to(dtypes[dtype]),
        "prod": reduction(prod),  # torch.prod: one dim
        "sum": reduction(sum_), "mean": reduction(mean),
        "max": extreme("max"), "min": extreme("min"),
        "concat": lambda *vs, axis: torch.cat(vs, dim=axis),
        "stack": lambda *vs, axis: torch.stack(vs, dim=axis),
        # tf.one_hot's zero row for an index outside [0, depth), where F.one_hot fails
        "one_hot": lambda i, depth, dtype: (i[..., None] == torch.arange(depth, device=i.device)).to(
            dtypes[dtype]),
        "getitem": getitem, "max_with_argmax": max_with_argmax,
        "sparse_softmax_cross_entropy_with_logits": sparse_xent,
    }
    ops = derive("torch", {"torch": torch, "F": F}, own, {"reduction": reduction})

    def booleans_as_bytes(run):
        # torch.argmax and argmin have no boolean kernel; TensorFlow's have (True > False)
        return lambda x, axis: run(x.to(torch.uint8) if x.dtype == torch.bool else x, axis=axis)

    ops["argmax"], ops["argmin"] = booleans_as_bytes(ops["argmax"]), booleans_as_bytes(ops["argmin"])
    return ops
