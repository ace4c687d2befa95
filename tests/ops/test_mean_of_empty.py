"""mean() of an empty tensor (or over an empty axis): NaN where a mean is over no element, as
tf.reduce_mean gives (TensorFlow 2.21 called here), with an empty gradient as tf.GradientTape's,
and no numpy "Mean of empty slice" RuntimeWarning reaching the user (warnings are errors here).

mean is the one reduction kernel of ops/kernels.py that numpy warns about when empty: sum and
prod of nothing are 0 and 1 without a word, and max, min and logsumexp give TensorFlow's
identities (tests/backends/test_backend_empty_reductions.py)."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import gradcli as gc
from gradcli.ops import kernels as K

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

CASES = [((0,), None), ((0,), (0,)), ((0, 3), None), ((0, 3), (0,)), ((3, 0), (1,)),
         ((2, 0, 4), (1,)), ((2, 0, 4), (0, 2)), ((0, 0), (1,))]


def tf_mean(x, axis, keepdims):
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = tf.reduce_mean(t, axis=None if axis is None else list(axis), keepdims=keepdims)
    return y.numpy(), tape.gradient(y, t).numpy()


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mean_of_nothing_is_tensorflows_nan_with_no_numpy_warning(dtype, shape, axis, keepdims):
    x = np.zeros(shape, dtype)
    want, want_grad = tf_mean(x, axis, keepdims)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning would fail the test
        t = gc.constant(x)
        y = gc.mean(t, axis=axis, keepdims=keepdims)
        (dx,) = gc.gradients(y, [t])
        got, got_grad = gc.evaluate(y), gc.evaluate(dx)
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.isnan(got).all() and np.isnan(want).all()  # every mean is over no element
    assert np.asarray(got_grad).shape == want_grad.shape == shape


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_an_integer_mean_of_nothing_is_tensorflows_zero_with_no_numpy_warning(dtype):
    """An integer mean is tf.reduce_mean's, an integer: 0 over no element (np.mean: NaN)."""
    for shape, axis in CASES:
        x = np.zeros(shape, dtype)
        for keepdims in (False, True):
            want = tf.reduce_mean(tf.constant(x), axis=None if axis is None else list(axis),
                                  keepdims=keepdims).numpy()
            with warnings.catch_warnings(), np.errstate(all="raise"):
                warnings.simplefilter("error")
                got = np.asarray(K.mean(x, axis, keepdims))
            assert got.dtype == want.dtype and got.shape == want.shape, (shape, axis)
            assert np.array_equal(got, want), (shape, axis)


# floats: an integer mean is TensorFlow's (above), a boolean has none
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_the_kernel_keeps_np_means_bits_and_type_and_says_nothing(dtype):
    """Only the warning goes: the value is np.mean's (its NaN's bits, dtype and scalar type)."""
    for shape, axis in CASES:
        x = np.zeros(shape, dtype)
        for keepdims in (False, True):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                want = np.mean(x, axis=axis, keepdims=keepdims)
            with warnings.catch_warnings(), np.errstate(all="raise"):
                warnings.simplefilter("error")
                got = K.mean(x, axis, keepdims)
            assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (shape, axis)


def test_a_spec_whose_mean_is_over_nothing_runs_without_a_numpy_warning(tmp_path):
    from click.testing import CliRunner

    from gradcli.cli import cli
    spec = tmp_path / "m.yaml"
    spec.write_text("name: empty\ninputs:\n  x: {zeros: [0, 2]}\noutputs:\n  y: mean(x, axis=0)\n"
                    "wrt: [x]\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        done = CliRunner().invoke(cli, ["run", str(spec), "--format", "json"])
    assert done.exit_code == 0, done.output
    assert "Mean of empty slice" not in done.output
