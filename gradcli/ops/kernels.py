"""The numpy kernels of the op table that are not one numpy function.

Each is kernel(*input values, **attributes) -> value, over numpy arrays or scalars;
the core replays them. Formulas that TensorFlow writes in a particular order keep
its order, so that values (and NaN at the edges) agree with it to the last bit.
"""
from __future__ import annotations

import math

import numpy as np


def sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


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


def logsumexp(v, axis=None, keepdims=False):
    peak = np.max(v, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    out = np.log(np.sum(np.exp(v - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


def softmax(v, axis=-1):
    e = np.exp(v - np.max(v, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(v, axis=-1):
    shifted = v - np.max(v, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def getitem(v, index):
    return v[index]


def reshape(v, shape):
    # the method: np.reshape's dispatch costs more than a small reshape itself
    return v.reshape(shape) if type(v) is np.ndarray else np.reshape(v, shape)


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
    """np.eye(depth)[v] (negative indices wrap, others out of range fail) without the
    depth x depth identity, which one_hot(i, 10**9) would have allocated."""
    v = np.asarray(v)
    if v.size:
        hi, lo = v.max(), v.min()
        if hi >= depth or lo < -depth:
            raise IndexError(f"index {hi if hi >= depth else lo} is out of bounds for axis 0 "
                             f"with size {depth}")
    if depth and v.dtype.kind in "iu":
        # one flat fancy assignment: put_along_axis's index building costs more than the
        # work for a batch of labels (this runs every training step)
        out = np.zeros(v.size * depth, dtype=dtype)
        out[np.arange(0, v.size * depth, depth) + (v.reshape(-1) % depth)] = 1
        return out.reshape(v.shape + (depth,))
    out = np.zeros(v.shape + (depth,), dtype=dtype)
    np.put_along_axis(out, (v % depth)[..., None] if depth else v[..., None], 1, axis=-1)
    return out


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
def check_labels(lo: int, hi: int, depth: int) -> None:
    """TensorFlow's CPU kernel refuses a label outside [0, depth) (its GPU kernel gives NaN)."""
    if lo < 0 or hi >= depth:
        bad = lo if lo < 0 else hi
        raise ValueError(f"received a label value of {bad} which is outside the valid range of "
                         f"[0, {depth}) (sparse_softmax_cross_entropy_with_logits)")


def sparse_xent_with_backprop(labels, logits):
    """(loss, backprop) as TensorFlow's fused kernel: per row over the last axis,
    loss = log(sum(exp(z - max z))) - (z - max z)[label] and backprop = softmax(z) - one_hot,
    the gradient wrt logits that the rule scales by dy. One pass for a batch: the few
    numpy calls are the point (this replaces one_hot, log_softmax, a product and a sum)."""
    labels = np.asarray(labels)
    depth = logits.shape[-1]
    if labels.size:
        if depth == 0:
            raise ValueError("logits have no classes (last dimension 0)")
        # one reduction for both ends: a negative label viewed unsigned is huge
        unsigned = labels.view(labels.dtype.str.replace("i", "u")) if labels.dtype.kind == "i" \
            else labels
        if int(np.maximum.reduce(unsigned, axis=None)) >= depth:
            check_labels(int(labels.min()), int(labels.max()), depth)
    shifted = logits - np.maximum.reduce(logits, axis=-1, keepdims=True)
    backprop = np.exp(shifted)
    total = np.add.reduce(backprop, axis=-1, keepdims=True)
    backprop /= total
    at = np.arange(0, labels.size * depth, depth) + labels.reshape(-1)  # flat index of each label
    loss = np.log(total.reshape(labels.shape)) - shifted.reshape(-1)[at].reshape(labels.shape)
    backprop.reshape(-1)[at] -= 1
    return loss, backprop


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    return sparse_xent_with_backprop(labels, logits)[0]
