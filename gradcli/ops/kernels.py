"""The numpy kernels of the op table that are not one numpy function.

Each is kernel(*input values, **attributes) -> value, over numpy arrays or scalars;
the core replays them. Formulas that TensorFlow writes in a particular order keep
its order, so that values (and NaN at the edges) agree with it to the last bit.
"""
from __future__ import annotations

import math

import numpy as np


def sigmoid(x):
    if getattr(x, "dtype", None) == _FLOAT32:
        # In float32 the formula rounds twice (logaddexp, then exp) and misses the correctly
        # rounded value at ~45% of inputs; 1 ulp of y is 1.3e-3 of the gradient y * (1 - y) at
        # x = 10. Computed in float64 and rounded once, it is correctly rounded, the value
        # TensorFlow, torch and jax give most often (TF's own float32 kernel varies with the
        # tensor's size). The same formula: exact 0 and 1 in the tails, no overflow.
        return np.exp(-np.logaddexp(0.0, -x.astype(np.float64))).astype(np.float32)
    return np.exp(-np.logaddexp(0.0, -x))


_FLOAT32 = np.dtype(np.float32)


def softplus(x):
    return np.logaddexp(0.0, x)


def relu(x):
    return np.maximum(x, 0)


def identity(x):
    return x


def reciprocal(x):
    return 1 / x


def _elementwise(fn):
    """A math-module function over an array, keeping its float dtype (numpy has no erf)."""
    ufunc = np.frompyfunc(fn, 1, 1)

    def run(x):
        x = np.asarray(x)
        out = np.asarray(ufunc(x)).astype(x.dtype if x.dtype.kind == "f" else np.float64)
        return out[()] if out.ndim == 0 else out
    run.__name__ = fn.__name__
    return run


erf = _elementwise(math.erf)
erfc = _elementwise(math.erfc)


# The dtypes an op refuses (a boolean max, an integer softmax, ...) are refused where the op
# is built, its input's dtype known (ops/table.refused_dtype): a kernel never sees one, and
# does only arithmetic on every replay.
def reduce_max(v, axis=None, keepdims=False):
    """np.max, and over an empty axis tf.reduce_max's identity (empty_identity)."""
    if np.size(v):
        return np.max(v, axis=axis, keepdims=keepdims)
    return np.max(v, axis=axis, keepdims=keepdims, initial=empty_identity(np.asarray(v).dtype, "max"))


def reduce_min(v, axis=None, keepdims=False):
    """np.min, and over an empty axis tf.reduce_min's identity (empty_identity)."""
    if np.size(v):
        return np.min(v, axis=axis, keepdims=keepdims)
    return np.min(v, axis=axis, keepdims=keepdims, initial=empty_identity(np.asarray(v).dtype, "min"))


def reduce_prod(v, axis=None, keepdims=False):
    """np.prod, but an integer product keeps its dtype and wraps, as tf.reduce_prod (np.prod
    widens int32 to int64)."""
    a = v if isinstance(v, np.ndarray) else np.asarray(v)
    if a.dtype.kind in "iu":
        return np.multiply.reduce(a, axis=axis, keepdims=keepdims, dtype=a.dtype)
    return np.prod(v, axis=axis, keepdims=keepdims)


def empty_identity(dtype, op: str):
    """What tf.reduce_max (op "max") or tf.reduce_min ("min") gives over an empty axis, where
    numpy, torch and jax fail: -inf / +inf, an integer dtype's lowest / highest value (a
    boolean max or min is refused as it is built: ops/table.refused_dtype). Every backend asks
    here; a non-empty input keeps its framework's own call."""
    dtype, lowest = np.dtype(dtype), op == "max"
    if dtype.kind == "f":
        return -math.inf if lowest else math.inf
    return int(np.iinfo(dtype).min if lowest else np.iinfo(dtype).max)


def logsumexp(v, axis=None, keepdims=False):
    peak = reduce_max(v, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    out = np.log(np.sum(np.exp(v - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


def softmax(v, axis=-1):
    e = np.exp(v - reduce_max(v, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(v, axis=-1):
    shifted = v - reduce_max(v, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def getitem(v, index):
    return v[index]


def reshape(v, shape):
    # the method (a numpy scalar has it too): np.reshape's dispatch costs more than a small
    # reshape itself
    return v.reshape(shape) if isinstance(v, (np.ndarray, np.generic)) else np.reshape(v, shape)


def reduce_sum(v, axis=None, keepdims=False):
    """np.sum, but an integer sum keeps its dtype and wraps, as tf.reduce_sum (np.sum widens
    int32 to int64)."""
    a = v if isinstance(v, np.ndarray) else np.asarray(v)
    if a.dtype.kind in "iu":
        return np.add.reduce(a, axis=axis, keepdims=keepdims, dtype=a.dtype)
    return np.sum(v, axis=axis, keepdims=keepdims)


def mean(v, axis=None, keepdims=False):
    """np.mean, bit for bit: for float32/float64 arrays it is add.reduce then a division by the
    count, done here without np.mean's Python-level dispatch (a loss's mean runs every step).
    An integer mean is tf.reduce_mean's (integer_mean)."""
    if type(v) is np.ndarray and v.dtype in _MEAN_FAST:
        count = v.size if axis is None else math.prod(v.shape[a] for a in axis)
        if count:
            return np.add.reduce(v, axis=axis, keepdims=keepdims) / count
    if np.asarray(v).dtype.kind in "iu":
        return integer_mean(v, axis, keepdims)
    if np.size(v) == 0:
        return _mean_of_nothing(v, axis, keepdims)
    return np.mean(v, axis=axis, keepdims=keepdims)


def integer_mean(v, axis=None, keepdims=False):
    """tf.reduce_mean of integers, in their dtype: the sum (int32's accumulated in int64, so it
    cannot wrap; int64's wrapping) divided by the count as C++ divides integers, truncated
    toward zero (-7 / 2 is -3, not -4 or -3.5), then cast back; over no element, 0 (the
    sum's identity, where a float mean is NaN). Each framework backend computes the same."""
    v = np.asarray(v)
    total = np.add.reduce(v, axis=axis, keepdims=keepdims,
                          dtype=np.uint64 if v.dtype.kind == "u" else np.int64)
    count = v.size if axis is None else math.prod(v.shape[a] for a in axis)
    if count == 0:
        return total.astype(v.dtype)  # a sum of nothing: zeros
    # floor division, then one up where it floored a negative quotient
    return (total // count + ((total % count != 0) & (total < 0))).astype(v.dtype)


def _mean_of_nothing(v, axis, keepdims):
    """np.mean of an empty array, bit for bit (NaN where a mean is over no element, as
    tf.reduce_mean gives), without the "Mean of empty slice" warning numpy prints to the
    user: the NaN is the answer, and the non-finite report says where it was born. Silenced
    in a copy of numpy's own steps (a sum, then a division by the count) rather than by
    warnings.catch_warnings, which swaps process-wide filters under other threads."""
    v = np.asarray(v)
    # np.mean's accumulator: float64 for integers and booleans, float32 for float16
    acc = np.float64 if v.dtype.kind in "biu" else np.float32 if v.dtype == np.float16 else None
    count = v.size if axis is None else math.prod(v.shape[a] for a in np.atleast_1d(axis))
    total = np.add.reduce(v, axis=axis, keepdims=keepdims, dtype=acc)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.true_divide(total, count)
    if v.dtype == np.float16:
        out = out.astype(np.float16)
    return out


_MEAN_FAST = (np.dtype(np.float64), np.dtype(np.float32))


def cast(v, dtype):
    return v.astype(dtype)


def concat(*values, axis=0):
    return np.concatenate(values, axis=axis)


def stack(*values, axis=0):
    return np.stack(values, axis=axis)


def clip(v, lo, hi):
    # min then max, as tf.clip_by_value: where lo > hi the result is lo, and a NaN stays NaN
    return np.maximum(np.minimum(v, hi), lo)


def one_hot(v, depth: int, dtype=np.float64):
    """Rows of np.eye(depth) picked by the integer indices v, and, as tf.one_hot, a row of
    zeros for an index outside [0, depth) (the "-1 = ignore" label), without the
    depth x depth identity, which one_hot(i, 10**9) would have allocated."""
    v = np.asarray(v)
    flat = v.reshape(-1)
    out = np.zeros(flat.size * depth, dtype=dtype)
    if out.size:
        # one flat fancy assignment: put_along_axis's index building costs more than the
        # work for a batch of labels (this runs every training step)
        starts = np.arange(0, out.size, depth)
        inside = (flat >= 0) & (flat < depth)
        if inside.all():
            out[starts + flat.astype(np.int64, copy=False)] = 1
        else:
            out[starts[inside] + flat[inside].astype(np.int64)] = 1
    return out.reshape(v.shape + (depth,))


def zero_out(v):
    zeroed = np.zeros_like(v)
    if np.size(v):
        zeroed.flat[0] = np.ravel(v)[0]
    return (zeroed[()] if zeroed.ndim == 0 else zeroed), np.int64(0)


def max_with_argmax(v, axis=-1):
    return np.max(v, axis=axis), np.argmax(v, axis=axis)


# ----- activations TensorFlow computes in one kernel: its formula, in its order -----
def softsign(x):
    return x / (np.abs(x) + 1)          # Eigen's features / (|features| + 1)


def elu(x):
    return np.where(x < 0, np.exp(x) - 1, x)  # TF's Elu: exp(x) - 1, not expm1


def relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


def silu(x):
    return x * sigmoid(x)  # tf.nn.silu: features * sigmoid(beta * features), beta 1


# ----- fused softmax cross-entropy (tf.nn.sparse_softmax_cross_entropy_with_logits) -----
def check_label_dtype(dtype, is_integer: bool, values=None) -> None:
    """TensorFlow's op takes integer labels only (a float label would be truncated by a
    gather, as torch's did); every backend refuses one in these words. `values` (the labels
    as a numpy array, when known): float labels that are not all whole numbers are float
    targets, not class indices, and casting them would truncate them silently, so the cast is
    suggested only for whole-valued ones."""
    if is_integer:
        return
    if values is not None:
        values = np.asarray(values)
        if values.dtype.kind == "f":
            fraction = values[np.isfinite(values) & (values != np.round(values))]
            if fraction.size:
                raise TypeError(
                    "sparse_softmax_cross_entropy_with_logits() needs integer labels (class "
                    f"indices), got {dtype} labels that are not whole numbers "
                    f"({float(fraction.flat[0])!r} among them): they look like float targets, "
                    "not classes, and cast(labels, int64) would truncate them (for targets, a "
                    "regression loss such as mean((prediction - labels) ** 2))")
    raise TypeError("sparse_softmax_cross_entropy_with_logits() needs integer labels, got "
                    f"{dtype} (cast(labels, int64))")


def check_labels(lo: int, hi: int, depth: int) -> None:
    """TensorFlow's CPU kernel refuses a label outside [0, depth) (its GPU kernel gives NaN)."""
    if lo < 0 or hi >= depth:
        bad = lo if lo < 0 else hi
        raise ValueError(f"received a label value of {bad} which is outside the valid range of "
                         f"[0, {depth}) (sparse_softmax_cross_entropy_with_logits)")


def sparse_xent_with_backprop(labels, logits):
    """(loss, backprop) as TensorFlow's fused kernel: per row over the last axis,
    loss = log(sum(exp(z - max z))) - (z - max z)[label] and backprop = softmax(z) - one_hot,
    the gradient wrt logits that the rule scales by dy. It replaces one_hot, log_softmax, a
    product and a sum in a training step, so it is written in few numpy calls: the labels are
    checked by one reduction and read and marked by one flat index."""
    if type(labels) is not np.ndarray:
        labels = np.asarray(labels)
    depth, n = logits.shape[-1], labels.size
    if n:
        if depth == 0:
            raise ValueError("logits have no classes (last dimension 0)")
        unsigned = _UNSIGNED.get(labels.dtype)  # a negative label viewed unsigned is huge
        if np.maximum.reduce(labels if unsigned is None else labels.view(unsigned), axis=None) \
                >= depth:
            check_labels(int(labels.min()), int(labels.max()), depth)
        if labels.dtype == np.uint64:  # in range: as intp (int64 + uint64 would be float64)
            labels = labels.astype(np.intp)
    shifted = logits - _row_max(logits)
    backprop = np.exp(shifted)
    total = np.add.reduce(backprop, axis=-1, keepdims=True)
    backprop /= total
    at = _row_starts(n, depth) + labels.reshape(-1)  # the flat index of each row's label
    loss = np.log(total).reshape(labels.shape) - shifted.reshape(-1)[at].reshape(labels.shape)
    backprop.reshape(-1)[at] -= 1
    return loss, backprop


def _row_max(logits):
    """max over the last axis, keepdims. A reduction along a short contiguous axis is slow in
    numpy (3.6 us for 64 x 10); along the outer axis of the transposed copy it is half that,
    and a max is exact whatever the order."""
    if logits.ndim == 2 and logits.shape[-1] <= 64:
        return np.maximum.reduce(logits.T.copy(), axis=0).reshape(-1, 1)
    return np.maximum.reduce(logits, axis=-1, keepdims=True)


_UNSIGNED = {np.dtype(f"i{k}"): np.dtype(f"u{k}") for k in (1, 2, 4, 8)}
_ROW_STARTS: dict = {}


def _row_starts(n: int, depth: int) -> np.ndarray:
    """0, depth, 2 * depth, ...: kept per shape (a training run has a few batch sizes)."""
    starts = _ROW_STARTS.get((n, depth))
    if starts is None:
        if len(_ROW_STARTS) > 64:
            _ROW_STARTS.clear()
        starts = _ROW_STARTS[(n, depth)] = np.arange(0, n * depth, depth)
        starts.flags.writeable = False
    return starts


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    return sparse_xent_with_backprop(labels, logits)[0]


def sum_to_axes(shape: tuple, target: tuple) -> tuple:
    """The axes a sum keeping dims takes to bring `shape` down to `target` (undoing
    broadcasting): the leading axes `target` lacks, and its 1s where `shape` has more.
    The one statement of that rule: the core's sum_to and every eager kit's use it."""
    lead = len(shape) - len(target)
    return tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target)
                                      if n == 1 and shape[lead + i] != 1)


# Seeded draws: kernel(generator, shape, **attributes), numpy's generator on every backend, so
# a spec draws the same numbers whichever backend runs it.
def uniform_draw(rng, shape, low=0.0, high=1.0):
    return rng.uniform(low, high, shape)


def normal_draw(rng, shape, mean=0.0, std=1.0):
    return rng.normal(mean, std, shape)


def bernoulli_draw(rng, shape, p=0.5):
    return (rng.random(shape) < p).astype(np.float64)  # 0/1 numbers, as the op gives them
