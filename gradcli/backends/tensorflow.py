"""The tensorflow backend: the op table in TensorFlow ops (its map derived from the table's
spellings), gradient control with its own tools.

Registered gradients, override_map entries and functions run through
tf.custom_gradient; stop_gradient is tf.stop_gradient; every gradient is one
persistent tf.GradientTape. Clipping uses tf.clip_by_norm and
tf.clip_by_global_norm themselves (the numpy core copies their formulas).
TensorFlow is imported only when the backend is built.
"""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager

import numpy as np

from ..ops.kernels import check_label_dtype
from . import availability
from .kit import unavailable
from .opmap import derive

NAME = "tensorflow"


def available() -> tuple[bool, str]:
    return availability(NAME)  # read in backends/__init__.py, without importing this module


def build(experiment):
    from .eager_program import EagerProgram
    return EagerProgram(experiment, TensorflowKit())


class TensorflowKit:
    """TensorFlow eager tensors, tf.custom_gradient and tf.GradientTape as an eager kit."""

    name = label = "tensorflow"
    unconnected_text = "tf.GradientTape returns what the op gradients return"
    norm_clip_epsilon = None
    native_adam = None

    def __init__(self) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        try:
            with _quiet_import() as said:
                import tensorflow as tf
        except ImportError as exc:
            raise unavailable("tensorflow", f"{exc}{said()}") from None
        self.tf = tf
        self.version = tf.__version__
        self.ops = _ops(tf)
        self.checks: dict = {}

    def static_conventions(self, experiment) -> list:
        if experiment.train is not None and experiment.train.optimizer == "adam":
            return [("adam", "tf.keras.optimizers.Adam has TensorFlow 1's update (epsilon outside "
                             "the sqrt, bias correction in the step size) but epsilon=1e-7 by "
                             "default; gradcli applies tf.compat.v1.train.AdamOptimizer's rule")]
        return []

    # ----- tensors -----
    def constant(self, array):
        array = np.asarray(array)
        return self.tf.constant(array, dtype=array.dtype)

    def is_tensor(self, value) -> bool:
        return isinstance(value, self.tf.Tensor)

    def dtype_name(self, t) -> str:
        return t.dtype.name

    def shape(self, t) -> tuple:
        return tuple(int(n) for n in t.shape)

    def numpy(self, t):
        return np.array(t.numpy())

    def copy(self, t):
        return self.tf.identity(t)

    def broadcast_to(self, t, shape):
        return self.tf.broadcast_to(t, shape)

    # ----- gradient machinery -----
    def stop_gradient(self, t):
        return self.tf.stop_gradient(t)

    def custom(self, inputs: list, forward, backward) -> tuple:
        tf = self.tf

        @tf.custom_gradient
        def op(*xs):
            outs = forward(*xs)
            outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)

            def grad(*dys):
                dys = tuple(tf.zeros_like(o) if d is None and o.dtype.is_floating else d
                            for d, o in zip(dys, outs))
                return list(backward(list(xs), outs, dys))

            return (outs if len(outs) > 1 else outs[0]), grad

        result = op(*inputs)
        return tuple(result) if isinstance(result, (tuple, list)) else (result,)

    def gradient(self, build, x):
        """(x, y = build(x), d(sum y)/dx): a tape inside any outer tape, which records it."""
        tf = self.tf
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = build(x)
        g = tape.gradient(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return x, y, tf.convert_to_tensor(g)

    def differentiate(self, f, sources: list):
        tf = self.tf
        tape = tf.GradientTape(persistent=True)
        with tape:
            for s in sources:
                tape.watch(s)
            outs = f(sources)

        def backward(i: int, seed):
            grads = tape.gradient(outs[i], sources, output_gradients=seed)
            return [None if g is None else tf.convert_to_tensor(g) for g in grads]

        return list(outs), backward

    # ----- TensorFlow's own clipping (the formulas the core and the other backends copy) -----
    def clip_by_norm(self, t, clip_norm):
        return self.tf.clip_by_norm(t, self.tf.constant(clip_norm, dtype=t.dtype))

    def clip_by_global_norm(self, grads: list, clip_norm) -> list:
        clipped, _ = self.tf.clip_by_global_norm(grads, self.tf.constant(clip_norm, grads[0].dtype))
        return list(clipped)


@contextmanager
def _quiet_import():
    """Hold back what TensorFlow's C++ side prints on stderr while it loads (absl and oneDNN
    start-up lines that TF_CPP_MIN_LOG_LEVEL no longer silences); the caller can read it back."""
    captured = {"text": ""}

    def said() -> str:
        return f"; it printed: {captured['text'].strip()}" if captured["text"].strip() else ""

    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield said
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), fd)
        try:
            yield said
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            captured["text"] = sink.read().decode("utf-8", "replace")


def _ops(tf) -> dict:
    tnp = tf.experimental.numpy

    def reduction(fn):
        def run(x, axis=None, keepdims=False):
            if axis == ():
                return tf.identity(x)
            return fn(x, axis=None if axis is None else list(axis), keepdims=keepdims)
        return run

    def div(x, y):
        if not (x.dtype.is_floating or y.dtype.is_floating):
            x, y = tf.cast(x, tf.float64), tf.cast(y, tf.float64)
        return tf.math.truediv(x, y)

    def getitem(x, index):
        if not any(isinstance(i, np.ndarray) for i in index):
            return x[index]
        # Integer-list indices, as numpy takes them: gather the flat positions they pick.
        shape = tuple(int(n) for n in x.shape)
        positions = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[index]
        return tf.gather(tf.reshape(x, [-1]), tf.constant(positions, tf.int64))

    def first_nan_or(fn):
        # tf.math.argmax/argmin skip NaN; numpy, torch and jax (and the core) pick the first NaN
        def run(x, axis):
            if not x.dtype.is_floating:  # no NaN to look for (and tf.math.is_nan takes floats only)
                return fn(x, axis=axis, output_type=tf.int64)
            nan = tf.math.is_nan(x)
            first_nan = tf.math.argmax(tf.cast(nan, tf.int8), axis=axis, output_type=tf.int64)
            return tf.where(tf.reduce_any(nan, axis=axis), first_nan,
                            fn(x, axis=axis, output_type=tf.int64))
        return run

    argmax = first_nan_or(tf.math.argmax)

    def max_with_argmax(x, axis):
        idx = argmax(x, axis)  # the first NaN too: its value is the NaN, as the other backends'
        return tf.squeeze(tnp.take_along_axis(x, tf.expand_dims(idx, axis), axis), axis), idx

    def erf(x):
        # tf.math.erf gives NaN beyond |x| ~ 1e154 (x * x overflows); erf is +-1 from |x| = 6 on.
        # where, not clip_by_value: a NaN keeps its NaN gradient
        far = tf.abs(x) > 30
        return tf.math.erf(tf.where(far, tf.sign(x) * tf.constant(30.0, x.dtype), x))

    def sparse_xent(labels, logits):
        # tf.nn's op refuses float labels with a NodeDef dump: here in gradcli's words
        check_label_dtype(labels.dtype.name, labels.dtype.is_integer,
                          labels.numpy() if labels.dtype.is_floating and tf.executing_eagerly()
                          else None)
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)

    # everything else is derived from the op table's spellings (opmap.derive)
    own = {
        "div": div, "sparse_softmax_cross_entropy_with_logits": sparse_xent,
        # (a boolean sum, mean, max, min or prod, which tf.reduce_* refuses with a NodeDef dump,
        # and an integer softmax are refused in gradcli's words as they are bound: eager_args)
        **{name: reduction(getattr(tf, f"reduce_{name}"))
           for name in ("sum", "mean", "max", "min", "prod")},
        "concat": lambda *vs, axis: tf.concat(vs, axis=axis),
        "stack": lambda *vs, axis: tf.stack(vs, axis=axis),
        "one_hot": lambda i, depth, dtype: tf.one_hot(i, depth, dtype=dtype),
        "getitem": getitem, "max_with_argmax": max_with_argmax,
        "argmax": argmax, "argmin": first_nan_or(tf.math.argmin), "erf": erf,
    }
    return derive("tensorflow", {"tf": tf, "tnp": tnp}, own, {"reduction": reduction})
