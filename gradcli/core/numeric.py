"""Central finite differences of the forward computation, by replaying the graph.

Each probe feeds a perturbed value for one x (and holds the stop_gradients
tensors at their current values, so the same partial derivative is taken);
the schedule is compiled once and replayed for every probe.
"""
from __future__ import annotations

import numpy as np

from ..errors import GradientError, UnconnectedGradientError
from ..fd import estimate, probe_kind
from .autodiff import UNCONNECTED, _tensor_list
from .evaluate import compile_schedule, feed_value
from .graph import Tensor, current_value, walk_ops

# Generating a schedule's source costs about what 10 to 70 of its replays save (measured on
# chains of 3 to 150 ops): fewer replays than this run the schedule's own loop.
CODEGEN_WORTH = 64


def numeric_gradients(ys, xs, grad_ys=None, stop_gradients=None, unconnected_gradients="none",
                      eps: float | None = None, max_probes: int = 2048, directions: int = 16,
                      seed: int = 0) -> list:
    """Finite-difference gradients of sum(grad_ys * ys) with respect to each x.

    An x with more than max_probes elements gets a directional estimate: the
    derivative along `directions` seeded random directions, returned as the
    least-norm gradient consistent with them (the true gradient's projection
    onto their span), so compare it with gradcli.fd.directional_projection().
    eps is the relative step (default: the dtype's eps ** (1/3); see gradcli.fd.estimate).
    """
    ys, xs = _tensor_list(ys, "ys"), _tensor_list(xs, "xs")
    if unconnected_gradients not in UNCONNECTED:
        raise GradientError(f"unconnected_gradients must be one of {', '.join(UNCONNECTED)}")
    weights = _weights(ys, grad_ys)
    stops = _tensor_list(stop_gradients or [], "stop_gradients")
    results = []
    for x in xs:
        held = [s for s in stops if s.uid != x.uid]
        if not x.differentiable or not _depends(ys, x, held):
            if unconnected_gradients == "error":
                raise UnconnectedGradientError(f"{x.name} is not connected to the outputs: no path "
                                               "carries a gradient to it "
                                               "(unconnected_gradients='error')")
            results.append(None if unconnected_gradients == "none"
                           else np.zeros(x.shape, dtype=x.dtype))
            continue
        base = np.asarray(current_value(x), dtype=np.float64)
        kind = probe_kind(base.size, max_probes)
        # two replays per element or direction: only a long loop repays generating the source
        replays = 2 * (base.size if kind == "full" else directions)
        schedule = compile_schedule(ys, [x, *held], generated=replays > CODEGEN_WORTH)
        held_values = [feed_value(s, current_value(s)) for s in held]

        def objective(value, schedule=schedule, held_values=held_values, x=x):
            outs = schedule.run([feed_value(x, value), *held_values])
            # the elements, not their sum: fd.difference keeps a NaN element to itself
            return [np.asarray(w) * np.asarray(o, dtype=np.float64) for w, o in zip(weights, outs)]

        results.append(_as_value(estimate(objective, base, x.dtype, kind, directions, seed,
                                          step=eps), x))
    return results


def _as_value(grad: np.ndarray, x: Tensor):
    grad = grad.astype(x.dtype)
    return grad[()] if grad.ndim == 0 else grad


def _weights(ys: list[Tensor], grad_ys) -> list:
    if grad_ys is None:
        return [1.0] * len(ys)
    grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
    return [1.0 if g is None else np.asarray(current_value(g) if isinstance(g, Tensor) else g,
                                             dtype=np.float64) for g in grad_ys]


def _depends(ys: list[Tensor], x: Tensor, held: list[Tensor]) -> bool:
    held_ids = {t.uid for t in held}
    if any(y.uid == x.uid for y in ys):
        return True
    return any(t.uid == x.uid for op in walk_ops(ys, stop=lambda t: t.uid in held_ids)
               for t in op.inputs)
