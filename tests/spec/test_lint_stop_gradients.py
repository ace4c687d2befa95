"""A wrt name the outputs use only through stop_gradients: the warning names the stopped
tensor (the output does depend on it), and TensorFlow agrees the gradient is unconnected."""
from __future__ import annotations

import tensorflow as tf

from gradcli import runner
from gradcli.spec import lint

SPEC = ("inputs: {a: 2.0, b: 3.0}\n"
        "let:\n  c: a*b\n  d: c+a\n"
        "outputs:\n  y: d*d\n"
        "stop_gradients: [c]\n")


def test_the_warning_names_the_stopped_tensor_not_a_missing_dependency(load):
    exp = load(SPEC)
    assert [str(w) for w in lint(exp)] == [
        "spec.yaml:1:18: inputs.b: the outputs use 'b' only through 'c' (listed in "
        "stop_gradients), so its gradients are all unconnected"]
    graph = tf.Graph()
    with graph.as_default():
        a, b = tf.constant(2.0, tf.float64), tf.constant(3.0, tf.float64)
        c = a * b
        d = c + a
        y = d * d
        grad_a, grad_b = tf.gradients(y, [a, b], stop_gradients=[c])
        with tf.compat.v1.Session() as session:
            want_a = session.run(grad_a)
    assert grad_b is None
    result = runner.run(exp)
    assert result.gradients["y"]["b"].overridden is None
    assert float(result.gradients["y"]["a"].overridden) == want_a == 16.0  # 2 d * 1, d = 8


def test_a_name_no_output_uses_keeps_the_plain_warning(load):
    exp = load("inputs: {a: 2.0, b: 3.0}\noutputs:\n  y: a*a\n")
    assert [str(w) for w in lint(exp)] == [
        "spec.yaml:1:18: inputs.b: no output depends on 'b', so its gradients are all "
        "unconnected"]
