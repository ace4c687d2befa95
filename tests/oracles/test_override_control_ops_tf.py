"""override_map entries for the gradient-control constructs, on every backend, against
TensorFlow 2.21 called here (a tf.compat.v1 graph with gradient_override_map), tryout10 F0.

stop_gradient is an op type (TensorFlow's StopGradient) and reverse_gradient one of gradcli's
(a gradient-reversal op): an override replaces their gradient and counts one op on every
backend, with no "matched no op" warning. grad_pass_through is a custom gradient, as
tf.grad_pass_through is (TensorFlow builds no op of that type), so an entry naming it is
refused at its place, and the spec without it gives TensorFlow's gradient everywhere.
An op inside a function's forward (a tf.custom_gradient) is not counted (tryout10 F8): the
function's own gradient replaces its, so the override never runs.
"""
from __future__ import annotations

import numpy as np
import pytest
from available import backend_params
from oracle_helpers import run_spec
from tf_graph import register, tf

from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

X = np.array([0.5, -2.0, 1.5])
TWICE = register(lambda op, dy: [2.0 * dy] + [None] * (len(op.inputs) - 1))
ZEROS = register(lambda op, dy: [tf.zeros_like(op.inputs[0])] + [None] * (len(op.inputs) - 1))
NEGATED = register(lambda op, dy: [-dy] + [None] * (len(op.inputs) - 1))


def tf_gradient(build) -> np.ndarray:
    """d sum(build(graph, x)) / dx in a TensorFlow 1 graph, float64."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X, tf.float64)
        grad, = tf.compat.v1.gradients(tf.reduce_sum(build(graph, x)), x)
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run(grad)


def spec(let: str, override: str, register_block: str = "") -> str:
    return (f"inputs:\n  x: [0.5, -2.0, 1.5]\n{register_block}let:\n  d: {let}\noutputs:\n"
            f"  y: sum(d)\noverride_map:\n  {override}\n")


def stop_twice(graph, x):
    with graph.gradient_override_map({"StopGradient": TWICE}):
        return tf.stop_gradient(x) * x


def stop_reversed(graph, x):
    with graph.gradient_override_map({"StopGradient": NEGATED}):
        return tf.stop_gradient(x) * x


def reversal_zeroed(graph, x):
    # a gradient-reversal op whose gradient the override replaces: TensorFlow's spelling of such
    # an op is an Identity with its gradient overridden, here by zeros
    with graph.gradient_override_map({"Identity": ZEROS}):
        return tf.identity(x) * x


def log_softmax_zeroed(graph, x):
    with graph.gradient_override_map({"LogSoftmax": ZEROS}):
        return tf.nn.log_softmax(x) * x


CASES = {
    "stop_gradient_twice": (spec("stop_gradient(x) * x", "StopGradient: Twice",
                                 "register:\n  Twice: 2 * dy\n"), stop_twice, "stop_gradient"),
    "stop_gradient_reverse": (spec("stop_gradient(x) * x", "stop_gradient: reverse"),
                              stop_reversed, "stop_gradient"),
    "reverse_gradient_zero": (spec("reverse_gradient(x, scale=2.0) * x", "reverse_gradient: zero"),
                              reversal_zeroed, "reverse_gradient"),
    # any op type with an underscore: the numpy core counted none of them (tryout10 F0)
    "log_softmax_zero": (spec("log_softmax(x) * x", "LogSoftmax: zero"), log_softmax_zeroed,
                         "log_softmax"),
}


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("case", CASES)
def test_an_override_of_a_control_op_is_applied_and_counted_on_every_backend(case, backend):
    text, build, op = CASES[case]
    result = run_spec(text, backend)
    expected = tf_gradient(build)
    np.testing.assert_allclose(result.gradients["y"]["x"].overridden, expected, rtol=0, atol=1e-15)
    assert [(e.op, n) for e, n in result.overrides] == [(op, 1)]
    assert result.warnings == []


def test_the_oracles_differ_from_the_gradients_without_the_override():
    """The cases can fail: without the entry TensorFlow's gradient is another one."""
    plain_stop = tf_gradient(lambda graph, x: tf.stop_gradient(x) * x)
    np.testing.assert_array_equal(plain_stop, X)
    assert not np.allclose(tf_gradient(stop_twice), plain_stop)
    assert not np.allclose(tf_gradient(stop_reversed), plain_stop)
    np.testing.assert_array_equal(tf_gradient(reversal_zeroed), X)  # -2x + x without the entry


def pass_through(graph, x):
    # what an entry for it would be in TensorFlow: no op has that type, so nothing is overridden
    with graph.gradient_override_map({"GradPassThrough": ZEROS, "grad_pass_through": ZEROS}):
        return tf.grad_pass_through(tf.round)(x) * x


@pytest.mark.parametrize("backend", backend_params())
def test_grad_pass_through_gives_tensorflow_s_gradient_on_every_backend(backend):
    text = "inputs:\n  x: [0.5, -2.0, 1.5]\nlet:\n  d: grad_pass_through(round(x)) * x\n" \
           "outputs:\n  y: sum(d)\n"
    expected = tf_gradient(pass_through)
    np.testing.assert_array_equal(expected, [0.5, -4.0, 3.5])  # x + round(x): not overridden
    result = run_spec(text, backend)
    np.testing.assert_allclose(result.gradients["y"]["x"].overridden, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("key", ["grad_pass_through", "GradPassThrough", "dtype"])
def test_an_entry_naming_a_call_that_builds_no_op_is_refused_at_its_place(key):
    text = spec("grad_pass_through(round(x)) * x", f"{key}: zero")
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, path="gpt.yaml")
    message = str(caught.value)
    assert message.startswith(f"gpt.yaml:8:3: override_map.{key}: {key!r} is not an op type")


# tryout10 F8: an op inside a function's forward is not counted, its gradient never runs
FUNCTION = ("inputs:\n  x: [0.5, -2.0, 1.5]\nfunctions:\n  f:\n    args: [a]\n"
            "    forward: sign(a) * a\n    gradient: dy * 3\nlet:\n  d: {let}\noutputs:\n"
            "  y: sum(d)\noverride_map:\n  Sign: identity\n")
STRAIGHT = register(lambda op, dy: [dy])


def with_function(outside: bool):
    def build(graph, x):
        @tf.custom_gradient
        def f(a):
            return tf.sign(a) * a, lambda dy: 3.0 * dy

        with graph.gradient_override_map({"Sign": STRAIGHT}):
            return f(x) + (tf.sign(x) * x if outside else x)
    return build


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("outside", [True, False], ids=["sign-outside-too", "sign-only-inside"])
def test_ops_inside_a_function_s_forward_are_not_counted(backend, outside):
    let = "f(x) + sign(x) * x" if outside else "f(x) + x"
    result = run_spec(FUNCTION.format(let=let), backend)
    expected = tf_gradient(with_function(outside))
    np.testing.assert_array_equal(expected, 3 + (np.sign(X) + X if outside else 1))
    np.testing.assert_allclose(result.gradients["y"]["x"].overridden, expected, rtol=0, atol=1e-15)
    assert [(e.op, n) for e, n in result.overrides] == [("sign", 1 if outside else 0)]
    if outside:
        assert result.warnings == []
    else:  # placed by the lint, once: the entry never runs
        assert result.warnings == [
            "oracle.yaml:13:3: override_map.sign: override_map entry 'sign' -> 'identity' "
            "matches no op: its sign ops are all inside the forward of function f, whose own "
            "gradient replaces theirs (as tf.custom_gradient's does), so it never runs"]
