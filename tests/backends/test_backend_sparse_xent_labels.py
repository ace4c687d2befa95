"""sparse_softmax_cross_entropy_with_logits takes integer labels only, as TensorFlow's op does,
on every backend in the same words (audit10: torch took float labels [2.0, 0.0] and gave the
loss, where numpy, jax and tensorflow refused them, each in its own words).

Oracle: TensorFlow itself (it refuses float and boolean labels; int32 and int64 labels give
the losses below), and the loss by hand with numpy.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

# `backend` is every backend (tests/backends/conftest.py)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402 - after the log level is set

LOGITS = [[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]]
SPEC = """\
inputs:
  logits: {logits}
  k: {{value: [2, 0], dtype: {dtype}}}
  f: [2.0, 0.0]
outputs:
  y: sum(sparse_softmax_cross_entropy_with_logits({labels}, logits))
"""


def run(tmp_path, backend, labels, dtype="int64"):
    path = tmp_path / "x.yaml"
    path.write_text(SPEC.format(logits=LOGITS, labels=labels, dtype=dtype))
    return CliRunner().invoke(cli, ["run", str(path), "--backend", backend, "--format", "json"])


@pytest.mark.parametrize("labels, shown", [("f", "float64"), ("[2.0, 0.0]", "float64"),
                                           ("k > 0", "bool")])
def test_non_integer_labels_are_refused_in_one_wording(tmp_path, backend, labels, shown):
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError, ValueError)):
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant([2.0, 0.0]) if shown != "bool" else tf.constant([True, False]),
            logits=tf.constant(LOGITS, tf.float64))
    result = run(tmp_path, backend, labels)
    assert result.exit_code == 2, result.output
    assert (f"sparse_softmax_cross_entropy_with_logits() needs integer labels, got {shown} "
            "(cast(labels, int64))") in result.output
    assert "Traceback" not in result.output and "NodeDef" not in result.output


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_labels_give_tensorflows_loss(tmp_path, backend, dtype):
    import json

    result = run(tmp_path, backend, "k", dtype)
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)["values"]["y"]
    expected = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([2, 0], getattr(tf, dtype)), logits=tf.constant(LOGITS, tf.float64)))
    logits = np.array(LOGITS)
    by_hand = -np.sum(logits[[0, 1], [2, 0]] - np.log(np.exp(logits).sum(axis=1)))
    np.testing.assert_allclose(got, float(expected), rtol=1e-12)
    np.testing.assert_allclose(got, by_hand, rtol=1e-12)


@pytest.mark.parametrize("labels", ["[0.5, 1.5]", "f * 0.25"])
def test_float_labels_that_are_not_whole_are_named_targets_not_cast(tmp_path, backend, labels):
    """0.5 and 1.5 are not class indices: cast(labels, int64) would truncate them to 0 and 1
    silently, so it is not suggested (tryout12); whole-valued float labels keep the cast."""
    result = run(tmp_path, backend, labels)
    assert result.exit_code == 2, result.output
    assert ("sparse_softmax_cross_entropy_with_logits() needs integer labels (class indices), got "
            "float64 labels that are not whole numbers (0.5 among them): they look like float "
            "targets, not classes, and cast(labels, int64) would truncate them (for targets, a "
            "regression loss such as mean((prediction - labels) ** 2))") in result.output
    assert "Traceback" not in result.output
