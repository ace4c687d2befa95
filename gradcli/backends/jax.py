"""The jax backend: the op table in jax.numpy (its map derived from the table's spellings),
gradient control with jax's own transformations.

Registered gradients, override_map entries and functions run through a
jax.custom_vjp (None cotangents for integer and boolean inputs);
stop_gradient is lax.stop_gradient; each output's gradients are one jax.vjp. jax has
no "unconnected" gradients (it returns zeros), so the recorded graph decides
where spec-v1's None belongs. x64 is switched on (process-wide) so that
float64 and int64 keep their width. jax is imported only when the backend is
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
from .kit import NONFINITE, EdgeNote, clip_as_tensorflow, edge_note, edge_notes, either, tie_note, unavailable
from .opmap import derive

NAME = "jax"


def available() -> tuple[bool, str]:
    return availability(NAME)  # read in backends/__init__.py, without importing this module


def build(experiment):
    from .eager_program import EagerProgram
    return EagerProgram(experiment, JaxKit())


def _clip_note(arrays, literal):
    x, lo, hi = arrays
    at_bound = (x == lo) | (x == hi)
    if np.any(at_bound):
        # x's and the bound's gradients differ by a finite split: the note excuses nothing
        return [EdgeNote("clip at a bound: jnp.clip (minimum of maximum) gives half the gradient "
                         "to x where x equals a bound; gradcli follows TensorFlow and the numpy core "
                         "(all of it)", at_bound, inputs=None)]
    return []


def _edge_notes() -> dict:
    notes = edge_notes("jax")
    # at 0 both are numbers; only the NaN half is a non-finite difference
    notes["abs"] = either(
        edge_note("jax", "abs", "at x = 0", "dy", "0 (sign(0))", lambda x, literal: x == 0),
        edge_note("jax", "abs", "at x NaN", "-dy", "NaN", lambda x, literal: np.isnan(x),
                  NONFINITE))
    notes["softsign"] = edge_note("jax", "softsign", "at x +-inf", "NaN", "0",
                                  lambda x, literal: np.isinf(x), NONFINITE)
    notes["elu"] = edge_note("jax", "elu", "at x NaN", "NaN", "dy", lambda x, literal: np.isnan(x),
                             NONFINITE)
    notes["prod"] = edge_note("jax", "prod", "whose product overflows", "0 where the upstream "
                              "gradient is 0", "NaN (0 * inf) there",
                              lambda x, literal: np.isfinite(x).all() & ~np.isfinite(np.prod(x)),
                              NONFINITE)
    return notes


class JaxKit:
    """jax arrays and transformations as an eager kit."""

    name = label = "jax"
    unconnected_text = "jax.vjp has no unconnected gradients"
    norm_clip_epsilon = None
    native_adam = "optax.adam"

    def __init__(self) -> None:
        try:
            import jax
            import jax.numpy as jnp
        except ImportError as exc:
            raise unavailable("jax", exc) from None
        jax.config.update("jax_enable_x64", True)
        self.jax, self.jnp = jax, jnp
        self.version = jax.__version__
        self.ops = _ops(jax, jnp)
        self.checks = {**_edge_notes(), "clip": _clip_note}
        for fn in ("maximum", "minimum"):
            self.checks[fn] = either(tie_note("jnp", fn), self.checks[fn])
        self._array_types = (jax.Array, jax.core.Tracer)

    def static_conventions(self, experiment) -> list:
        return [("x64", "jax runs with jax_enable_x64 switched on for the whole process, so that "
                        "float64 and int64 keep their width")]

    # ----- tensors -----
    def constant(self, array):
        array = np.asarray(array)
        return self.jnp.asarray(array, dtype=array.dtype)

    def is_tensor(self, value) -> bool:
        return isinstance(value, self._array_types)

    def dtype_name(self, t) -> str:
        return np.dtype(t.dtype).name

    def shape(self, t) -> tuple:
        return tuple(t.shape)

    def numpy(self, t):
        return np.array(t)

    def copy(self, t):
        return self.jnp.array(t, copy=True)

    def broadcast_to(self, t, shape):
        return self.jnp.broadcast_to(t, shape)

    # ----- gradient machinery -----
    def stop_gradient(self, t):
        return self.jax.lax.stop_gradient(t)

    def custom(self, inputs: list, forward, backward) -> tuple:
        jax, jnp = self.jax, self.jnp

        def run(*xs):
            outs = forward(*xs)
            return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)

        @jax.custom_vjp
        def op(*xs):
            return run(*xs)

        def fwd(*xs):
            # op itself, not run: an outer differentiation (grad() in a spec) then meets the
            # custom rule again, as TensorFlow's and torch's do, not run's native derivative
            outs = op(*xs)
            return outs, (xs, outs)

        def bwd(residuals, dys):
            xs, outs = residuals
            dys = tuple(d if jnp.issubdtype(o.dtype, jnp.floating) else None
                        for d, o in zip(dys, outs))
            return tuple(backward(xs, outs, dys))

        op.defvjp(fwd, bwd)
        return op(*inputs)

    def gradient(self, build, x):
        """(x as built from, y = build(x), d(sum y)/dx): a vjp inside whatever is traced."""
        seen = {}

        def f(x_in):
            seen["x"], seen["y"] = x_in, build(x_in)
            return seen["y"]

        y, vjp = self.jax.vjp(f, x)
        (g,) = vjp(self.jnp.ones_like(y))
        return seen["x"], seen["y"], g

    def differentiate(self, f, sources: list):
        jax = self.jax
        outs, vjp = jax.vjp(lambda *s: tuple(f(list(s))), *sources)

        def backward(i: int, seed):
            if len(outs) == 1:
                return list(vjp((seed,)))
            # One vjp per output: through a joint one, the other outputs' zero cotangents meet
            # their own infinite partials (0 * inf) and leak NaN into this output's gradients.
            _, vjp_i = jax.vjp(lambda *s: f(list(s))[i], *sources)
            return list(vjp_i(seed))

        return list(outs), backward


def _ops(jax, jnp) -> dict:
    import jax.scipy.special
    nn = jax.nn

    def reduction(fn):
        def run(x, axis=None, keepdims=False):
            if axis == ():
                return jnp.array(x, copy=True)
            return fn(x, axis=axis, keepdims=keepdims)
        return run

    def sum_(x, axis, keepdims):
        if jnp.issubdtype(x.dtype, jnp.floating):
            return jnp.sum(x, axis=axis, keepdims=keepdims)
        return jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)  # jnp widens int32

    def prod(x, axis, keepdims):
        if jnp.issubdtype(x.dtype, jnp.floating):
            return jnp.prod(x, axis=axis, keepdims=keepdims)
        return jnp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)  # jnp widens int32

    def mean(x, axis, keepdims):
        if jnp.issubdtype(x.dtype, jnp.floating):
            return jnp.mean(x, axis=axis, keepdims=keepdims)
        # tf.reduce_mean's integer mean, as the core's kernel (ops/kernels.integer_mean);
        # lax.div truncates an integer quotient toward zero
        total = jnp.sum(x, axis=axis, keepdims=keepdims, dtype=jnp.int64)
        count = x.size if axis is None else math.prod(x.shape[a] for a in axis)
        quotient = jax.lax.div(total, jnp.asarray(count, total.dtype)) if count else total
        return quotient.astype(x.dtype)

    def extreme(op):
        def run(x, axis, keepdims):
            # empty: TensorFlow's identity, where jnp.max has none and fails
            empty = {} if x.size else {"initial": empty_identity(x.dtype, op)}
            return getattr(jnp, op)(x, axis=axis, keepdims=keepdims, **empty)
        return reduction(run)

    @jax.custom_vjp
    def real_div(x, y):
        return jnp.divide(x, y)

    def real_div_bwd(residuals, g):
        # TensorFlow's RealDiv gradient, in its order: jax's own -g * x * y**-2 overflows (and
        # gives NaN for x = 0) where y**-2 does, at |y| < 5.4e-20 in float32. Through real_div
        # again, so that a second derivative (grad() in a spec) meets this rule as TF's does.
        x, y = residuals
        return real_div(g, y), g * real_div(real_div(-x, y), y)

    real_div.defvjp(lambda x, y: (real_div(x, y), (x, y)), real_div_bwd)

    def div(x, y):
        # a bare number (a composite's `/ 6`) takes the tensor's dtype, as jnp.divide gives it;
        # two integer tensors divide in float64
        dtype = jnp.result_type(x, y)
        if not jnp.issubdtype(dtype, jnp.floating):
            dtype = jnp.float64
        # one shape and dtype for the rule's cotangents; broadcast_arrays' own gradient sums back
        return real_div(*jnp.broadcast_arrays(jnp.asarray(x, dtype), jnp.asarray(y, dtype)))

    def clip(x, lo, hi):
        # TensorFlow's clip_by_value (jnp.clip halves the gradient at a bound, gives hi where lo > hi)
        return clip_as_tensorflow(x, lo, hi, where=jnp.where, isnan=jnp.isnan,
                                  stop=jax.lax.stop_gradient, full_like=jnp.full_like)

    @jax.custom_jvp
    def abs_(x):
        return jnp.abs(x)

    # TensorFlow's gradient sign(x) * dy, 0 at 0 (jnp.abs's derivative is 1 there)
    abs_.defjvp(lambda primals, tangents: (jnp.abs(primals[0]), tangents[0] * jnp.sign(primals[0])))

    def max_with_argmax(x, axis):
        idx = jnp.argmax(x, axis=axis)
        return jnp.take_along_axis(x, jnp.expand_dims(idx, axis), axis=axis).squeeze(axis), idx

    def sparse_xent(labels, logits):
        # TensorFlow's CPU op refuses labels outside [0, classes); take_along_axis would clamp
        check_label_dtype(labels.dtype, jnp.issubdtype(labels.dtype, jnp.integer),
                          None if isinstance(labels, jax.core.Tracer)
                          or not jnp.issubdtype(labels.dtype, jnp.floating) else np.asarray(labels))
        if labels.size and not isinstance(labels, jax.core.Tracer):
            check_labels(int(labels.min()), int(labels.max()), logits.shape[-1])
        picked = jnp.take_along_axis(nn.log_softmax(logits, axis=-1), labels[..., None], axis=-1)
        return -picked[..., 0]

    # everything else is derived from the op table's spellings (opmap.derive)
    own = {
        "abs": abs_, "div": div,
        "max": extreme("max"), "min": extreme("min"), "prod": reduction(prod),
        "sum": reduction(sum_), "mean": reduction(mean),
        # TensorFlow's convention (ties send the whole gradient to x), not jnp.maximum's halves
        "maximum": lambda x, y: jnp.where((x >= y) | jnp.isnan(x), x, y),
        "minimum": lambda x, y: jnp.where((x <= y) | jnp.isnan(x), x, y),
        "clip": clip,
        "concat": lambda *vs, axis: jnp.concatenate(vs, axis=axis),
        "stack": lambda *vs, axis: jnp.stack(vs, axis=axis),
        "one_hot": lambda i, depth, dtype: nn.one_hot(i, depth, dtype=dtype),
        "getitem": lambda x, index: x[index], "max_with_argmax": max_with_argmax,
        "sparse_softmax_cross_entropy_with_logits": sparse_xent,
    }
    return derive("jax", {"jnp": jnp, "jax": jax, "nn": nn, "jsp": jax.scipy.special}, own,
                  {"reduction": reduction})
