"""An override on a boolean/integer path matches an op but can never run: warn, point at the
right way (a custom-gradient function), and check both against TensorFlow itself."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from gradcli import runner
from gradcli.spec import lint, load_spec

V = [-1.0, 0.5, -0.2, 2.0, 0.1]
WEIGHTS = [1.0, 2.0, 3.0, 4.0, 5.0]
STEP = "  spikes: sum(cast(v > 0, dtype(v)) * [1, 2, 3, 4, 5])\n"
SURROGATE = "dy * sigmoid(4*x) * (1 - sigmoid(4*x)) * 4"
EXPERIMENT = Path(__file__).parents[2] / "experiments" / "spiking_surrogate_gradient.yaml"


def spec(op: str, gradient: str) -> str:
    return (f"inputs: {{v: {V}}}\n"
            f"register: {{SigSurr: {gradient}}}\n"
            f"override_map: {{{op}: SigSurr}}\n"
            "outputs:\n" + STEP)


def tf_override_gradient(op_type: str):
    """tf.gradients through cast(v > 0) with gradient_override_map({op_type: ...}), graph mode."""
    name = f"GradcliTestSigSurr{op_type}"

    @tf.RegisterGradient(name)
    def _surrogate(op, dy):
        s = tf.sigmoid(4 * tf.cast(op.inputs[0], tf.float64))
        return [dy * s * (1 - s) * 4] + [None] * (len(op.inputs) - 1)

    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.placeholder(tf.float64, [5])
        with graph.gradient_override_map({op_type: name}):
            step = tf.cast(v > 0, v.dtype)
        return tf.gradients(tf.reduce_sum(step * WEIGHTS), [v])[0]


def test_cast_override_on_a_boolean_input_warns_at_the_entry(load):
    exp = load(spec("Cast", SURROGATE))
    [warning] = lint(exp)
    text = str(warning)
    assert text.startswith("spec.yaml:3:16: override_map.cast: override_map entry 'cast' -> "
                           "'SigSurr' can never take effect: every cast op it matches takes a "
                           "boolean/integer input")
    assert "functions: {spike: {args: [v], forward: 'cast(v > 0, dtype(v))'" in text
    result = runner.run(exp)
    assert tf_override_gradient("Cast") is None  # TensorFlow: no gradient, so keep None
    assert result.gradients["spikes"]["v"].overridden is None
    assert any("'cast' -> 'SigSurr' can never take effect" in w for w in result.warnings)


def test_greater_override_warns_its_boolean_output(load):
    exp = load(spec("Greater", f"[{SURROGATE}, none]"))
    [warning] = lint(exp)
    assert "override_map entry 'greater' -> 'SigSurr' can never take effect: every greater op " \
           "it matches has a boolean output" in str(warning)
    assert tf_override_gradient("Greater") is None
    assert runner.run(exp).gradients["spikes"]["v"].overridden is None


def test_an_override_on_a_float_path_is_not_warned(load):
    exp = load(f"inputs: {{v: {V}}}\noverride_map: {{Sign: identity}}\n"
               "outputs:\n  y: sum(sign(v) * [1, 2, 3, 4, 5])\n")
    assert lint(exp) == []
    # an integer input cast to float: the cast's input is integer, the override cannot run
    exp = load("inputs:\n  k: {value: [1, 2], dtype: int64}\n  v: [1.0, 2.0]\n"
               "override_map: {Cast: identity}\noutputs:\n  y: sum(cast(k, dtype(v)) * v)\n")
    assert "takes a boolean/integer input" in str(lint(exp)[0])


def test_the_surrogate_experiment_matches_tf_custom_gradient():
    @tf.custom_gradient
    def spike(v):
        def grad(dy):
            s = tf.sigmoid(4 * v)
            return dy * 4 * s * (1 - s)
        return tf.cast(v > 0, v.dtype), grad

    v = tf.constant(V, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.reduce_sum(spike(v) * WEIGHTS)
    want = tape.gradient(y, v).numpy()
    exp = load_spec(EXPERIMENT)
    assert lint(exp) == []
    np.testing.assert_allclose(exp.expect.gradients["spikes"]["v"], want, rtol=1e-7)
    result = runner.run(exp)
    np.testing.assert_allclose(result.gradients["spikes"]["v"].overridden, want, rtol=1e-12)
    assert float(result.values["spikes"]) == float(y.numpy()) == 11.0
    assert result.gradients["spikes"]["v"].true.tolist() == [0.0] * 5  # a step: zero a.e.
    assert result.expect.passed


def tf_argmax_override_gradient():
    """tf.gradients of cast(argmax(v)) * 2 + sum(v) with ArgMax's gradient overridden (graph
    mode), run on V: the override never runs, as Cast passes nothing back into an integer."""
    name = "GradcliTestArgmaxSurr"

    @tf.RegisterGradient(name)
    def _surrogate(op, dy):
        return [tf.ones_like(op.inputs[0]) * 100.0, None]

    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.placeholder(tf.float64, [5])
        with graph.gradient_override_map({"ArgMax": name}):
            k = tf.argmax(v, axis=-1)
        g = tf.gradients(tf.cast(k, tf.float64) * 2.0 + tf.reduce_sum(v), [v])[0]
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run(g, {v: V})


def test_an_override_of_an_index_op_warns_its_integer_output(load):
    # argmax's output is an int64 index (the op table's result), so nothing flows back into it
    exp = load(f"inputs: {{v: {V}}}\nregister: {{Ones: ones_like(x) * 100.0}}\n"
               "override_map: {argmax: Ones}\n"
               "outputs:\n  k: cast(argmax(v), float64) * 2.0 + sum(v)\n")
    [warning] = lint(exp)
    assert "override_map entry 'argmax' -> 'Ones' can never take effect: every argmax op it " \
           "matches has an integer index as its output" in str(warning)
    expected = tf_argmax_override_gradient()
    assert expected.tolist() == [1.0] * 5  # sum(v)'s alone
    assert runner.run(exp).gradients["k"]["v"].overridden.tolist() == expected.tolist()


def test_an_override_of_a_cast_from_an_index_warns_its_integer_input(load):
    exp = load(f"inputs: {{v: {V}}}\nregister: {{Ones: ones_like(x)}}\n"
               "override_map: {cast: Ones}\n"
               "outputs:\n  k: cast(argmax(v, axis=0), dtype=float64) * 2.0\n")
    [warning] = lint(exp)
    assert "every cast op it matches takes a boolean/integer input" in str(warning)
