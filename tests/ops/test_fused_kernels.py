"""The numpy kernels a training step replays, against numpy written out here: the fused
cross-entropy (every label dtype, negative labels, 0-d and 3-d shapes, extreme logits) and the
fast mean (np.mean's exact bits and types for every dtype, shape and axis)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradcli.ops import kernels as K


def _reference(labels, logits):
    logits = np.asarray(logits, dtype=np.float64)
    log_p = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
    onehot = np.eye(logits.shape[-1])[labels]
    return -np.sum(onehot * log_p, axis=-1), np.exp(log_p) - onehot


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
@pytest.mark.parametrize("shape", [(), (7,), (2, 3)])
def test_xent_kernel_is_loss_and_softmax_minus_one_hot(dtype, shape):
    rng = np.random.default_rng(len(shape))
    logits = rng.normal(size=shape + (5,)) * 4
    labels = rng.integers(0, 5, shape).astype(dtype)
    loss, backprop = K.sparse_xent_with_backprop(labels, logits)
    want_loss, want_backprop = _reference(labels, logits)
    assert np.shape(loss) == shape and backprop.shape == logits.shape
    np.testing.assert_allclose(loss, want_loss, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(backprop, want_backprop, rtol=1e-13, atol=1e-15)
    assert np.array_equal(logits, np.asarray(logits))  # the input is left alone


def test_xent_kernel_is_stable_for_huge_logits():
    loss, backprop = K.sparse_xent_with_backprop(np.array([0, 2]),
                                                 np.array([[1000.0, 999.0, -5.0], [0.5, 700.0, 701.0]]))
    np.testing.assert_allclose(loss, [np.log1p(np.exp(-1.0)), np.log1p(np.exp(-1.0))], rtol=1e-14)
    assert np.isfinite(backprop).all()


@pytest.mark.parametrize("labels", [[0, 5], [-1, 0], [3, -128]])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_xent_kernel_refuses_labels_outside_the_classes(labels, dtype):
    bad = next(v for v in labels if not 0 <= v < 5)
    with pytest.raises(ValueError, match=rf"label value of {bad} which is outside the valid "
                                         r"range of \[0, 5\)"):
        K.sparse_xent_with_backprop(np.array(labels, dtype), np.zeros((2, 5)))


def _same(a, b) -> bool:
    a2, b2 = np.asarray(a), np.asarray(b)
    return (type(a) is type(b) and a2.dtype == b2.dtype and a2.shape == b2.shape
            and a2.tobytes() == b2.tobytes())


# floats only: an integer mean is tf.reduce_mean's, a boolean has none (np.mean gives a float
# for both; tests/backends/test_backend_integer_reductions.py checks them against TensorFlow)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_fast_mean_gives_np_means_bits_and_type(dtype):
    rng = np.random.default_rng(3)
    for shape in [(), (1,), (64,), (3, 5), (2, 3, 4), (1000,), (129, 3)]:
        x = (rng.normal(size=shape) * 10.0 ** rng.uniform(-3, 3, size=shape)).astype(dtype)
        axes = [None] + [c for r in range(1, len(shape) + 1)
                         for c in itertools.combinations(range(len(shape)), r)]
        for axis, keepdims in itertools.product(axes, (False, True)):
            got, want = K.mean(x, axis, keepdims), np.mean(x, axis=axis, keepdims=keepdims)
            assert _same(got, want), (dtype, shape, axis, keepdims, got, want)


def test_xent_kernel_keeps_a_nan_or_inf_to_its_own_row():
    logits = np.array([[0.0, np.nan, 1.0], [1.0, 2.0, 3.0], [np.inf, 0.0, 0.0]])
    with np.errstate(invalid="ignore"):  # the replay runs kernels so
        loss, backprop = K.sparse_xent_with_backprop(np.array([0, 2, 1]), logits)
    want_loss, want_backprop = _reference(np.array([2]), logits[1:2])
    assert np.isnan(loss[0]) and np.isnan(backprop[0]).all()
    np.testing.assert_allclose(loss[1], want_loss[0], rtol=1e-14)
    np.testing.assert_allclose(backprop[1], want_backprop[0], rtol=1e-14)
    assert np.isnan(loss[2])  # inf - inf, as TensorFlow's max-shifted formula gives
