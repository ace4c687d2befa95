"""gc.function checks what it is fed (each value, and their number: review6 6) as
gc.evaluate does, and gc.custom_gradient treats a variable its forward captures as
tf.custom_gradient does (tryout6 findings 3 and 4; review6 3: only variables read while
the forward runs count).

Oracles: numpy by hand and TensorFlow's own tf.custom_gradient / GradientTape.
"""
import numpy as np
import pytest
import tensorflow as tf

import gradcli as gc
from gradcli.errors import GradcliError, GraphError


def test_function_refuses_a_feed_of_another_shape_as_evaluate_does():
    w = gc.variable(np.array([1.0, 2.0]))
    X = gc.variable(np.zeros((1, 2)), trainable=False)
    loss = gc.mean(X * w)
    f = gc.function([loss, *gc.gradients([loss], [w])], feeds=[X])
    batch = np.arange(6.0).reshape(3, 2)
    with pytest.raises(GraphError, match=r"shape \(3, 2\).*of shape \(1, 2\)"):
        f(batch)
    with pytest.raises(GraphError, match=r"shape \(3, 2\).*of shape \(1, 2\)"):
        gc.evaluate(loss, feed={X: batch})
    row = np.array([[3.0, 5.0]])  # the built shape passes, and gives numpy's numbers
    value, grad = f(row)
    assert value == np.mean(row * [1.0, 2.0])
    np.testing.assert_array_equal(grad, row[0] / 2)


def test_function_casts_a_feed_to_the_variables_dtype_as_evaluate_does():
    w = gc.variable(np.array([0.3, -1.7], np.float32))
    X = gc.variable(np.zeros((2, 2), np.float32), trainable=False)
    loss = gc.sum(gc.tanh(gc.matmul(X, gc.reshape(w, (2, 1)))))
    f = gc.function([loss, *gc.gradients([loss], [w])], feeds=[X])
    batch = np.array([[0.1, 0.7], [1.3, -0.2]])  # float64, numpy's default
    value, grad = f(batch)
    x32 = batch.astype(np.float32)
    expected = np.sum(np.tanh(x32 @ np.array([0.3, -1.7], np.float32)))  # float32 oracle
    assert value.dtype == np.float32 and grad.dtype == np.float32
    assert value == gc.evaluate(loss, feed={X: batch})
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    assert f([[0.1, 0.7], [1.3, -0.2]])[0] == value  # a nested list is converted too


def test_a_scalar_fed_a_vector_is_refused():
    s = gc.variable(2.0)
    w = gc.variable(np.array([1.0, 3.0]))
    y = gc.sum(s * w)
    f2 = gc.function([y, *gc.gradients([y], [s, w])], feeds=[s])
    with pytest.raises(GraphError, match=r"shape \(2,\)"):
        f2(np.array([1.0, 3.0]))
    assert f2(1.5)[0] == 1.5 * 4.0


def _tf_captured(grad_with_variables: bool):
    w = tf.Variable(np.array([2.0, 3.0]))
    x = tf.Variable(np.array([1.0, -1.0]))

    @tf.custom_gradient
    def f(v):
        y = v * w
        if grad_with_variables:
            def grad(dy, variables=None):
                return dy * 10.0, [dy * v * 3.0 for _ in variables]
        else:
            def grad(dy):
                return dy * 10.0
        return y, grad

    with tf.GradientTape() as tape:
        out = tf.reduce_sum(f(x))
    return [g.numpy() for g in tape.gradient(out, [x, w])]


def test_custom_gradient_capturing_a_variable_needs_variables_as_in_tensorflow():
    with pytest.raises(TypeError, match="variables"):
        _tf_captured(False)
    w = gc.variable(np.array([2.0, 3.0]), name="w")
    x = gc.variable(np.array([1.0, -1.0]), name="x")

    @gc.custom_gradient
    def f(v):
        return v * w, lambda dy: dy * 10.0

    with pytest.raises(GradcliError, match="'w'.*variables"):
        f(x)


def test_custom_gradient_with_variables_gives_their_gradients_as_tensorflow():
    expected = _tf_captured(True)
    w = gc.variable(np.array([2.0, 3.0]), name="w")
    x = gc.variable(np.array([1.0, -1.0]), name="x")
    seen = []

    @gc.custom_gradient
    def f(v):
        def grad(dy, variables=None):
            seen.append(variables)
            return dy * 10.0, [dy * v * 3.0 for _ in variables]
        return v * w, grad

    out = gc.sum(f(x))
    got = [gc.evaluate(g) for g in gc.gradients(out, [x, w])]
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert seen == [[w]]
    true = [gc.evaluate(g) for g in gc.true_gradients(out, [x, w])]
    np.testing.assert_array_equal(true[0], [2.0, 3.0])
    np.testing.assert_array_equal(true[1], [1.0, -1.0])
    opt = gc.train.GradientDescentOptimizer(0.1)
    assert {v.name for g, v in opt.compute_gradients(out) if g is not None} == {"w", "x"}


def test_custom_gradient_reading_only_its_inputs_or_constants_needs_no_variables():
    x = gc.variable(np.array([1.0, -1.0]))
    frozen = gc.variable(np.array([4.0, 5.0]), trainable=False)  # TF watches trainable ones only

    @gc.custom_gradient
    def f(v):
        return v * frozen * gc.constant(2.0), lambda dy: dy * 7.0

    (g,) = gc.gradients(gc.sum(f(x)), [x])
    np.testing.assert_array_equal(gc.evaluate(g), [7.0, 7.0])


def _tf_prebuilt(graph: bool):
    """review6 3: h is built from w before the call; fn closes over h only."""
    w = tf.Variable(np.array([1.0, 2.0]), name="w")
    x = tf.constant(np.array([1.0, 1.0]))

    def run():
        h = w * 3.0

        @tf.custom_gradient
        def f(v):
            def grad(dy):
                return dy * h
            return v * h, grad

        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.reduce_sum(f(x))
        return tape.gradient(out, [x, w])

    grads = tf.function(run)() if graph else run()
    return [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "tf.function"])
def test_custom_gradient_closing_over_a_tensor_built_from_a_variable_before_the_call(graph):
    expected = _tf_prebuilt(graph)
    assert expected[1] is None and expected[0].tolist() == [3.0, 6.0]
    w = gc.variable(np.array([1.0, 2.0]), name="w")
    h = w * 3.0

    @gc.custom_gradient
    def f(v):
        return v * h, lambda dy: dy * h

    x = gc.constant(np.array([1.0, 1.0]))
    gx, gw = gc.gradients(gc.sum(f(x)), [x, w])
    np.testing.assert_array_equal(gc.evaluate(gx), expected[0])
    assert gw is None


def test_custom_gradient_reports_only_the_variables_read_inside_as_tensorflow():
    def tf_seen():
        w = tf.Variable(np.array([1.0, 2.0]), name="w")
        u = tf.Variable(np.array([5.0, 7.0]), name="u")
        h, seen = w * 3.0, []

        @tf.custom_gradient
        def f(v):
            def grad(dy, variables=None):
                seen.append([var.name.split(":")[0] for var in variables])
                return dy * h * u, [dy * v * h for _ in variables]
            return v * h * u, grad

        x = tf.constant(np.array([1.0, -1.0]))
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.reduce_sum(f(x))
        grads = tape.gradient(out, [x, w, u])
        return seen, [None if g is None else g.numpy() for g in grads]

    tf_names, expected = tf_seen()
    assert tf_names == [["u"]] and expected[1] is None
    w = gc.variable(np.array([1.0, 2.0]), name="w")
    u = gc.variable(np.array([5.0, 7.0]), name="u")
    h, seen = w * 3.0, []

    @gc.custom_gradient
    def f(v):
        def grad(dy, variables=None):
            seen.append([var.name for var in variables])
            return dy * h * u, [dy * v * h for _ in variables]
        return v * h * u, grad

    x = gc.constant(np.array([1.0, -1.0]))
    grads = gc.gradients(gc.sum(f(x)), [x, w, u])
    assert seen == tf_names and grads[1] is None
    np.testing.assert_array_equal(gc.evaluate(grads[0]), expected[0])
    np.testing.assert_array_equal(gc.evaluate(grads[2]), expected[2])

    @gc.custom_gradient
    def g(v):  # the same reads without variables=: refused, naming u only (TF: a TypeError)
        return v * h * u, lambda dy: dy * h * u

    with pytest.raises(TypeError, match=r"'u', which"):
        g(x)


@pytest.mark.parametrize("count", [0, 1, 3])
def test_function_refuses_a_wrong_number_of_feed_values(count):
    """review6 6: zip() dropped extras, and a missing value reached the replay as None."""
    x = gc.variable(np.array([1.0, 2.0]), name="x", trainable=False)
    k = gc.variable(np.array([3.0]), name="k", trainable=False)
    y = gc.sum(x * 2.0 + k)
    f = gc.function([y, x], feeds=[x, k])
    a = np.array([0.5, 4.0])
    with pytest.raises(GraphError, match=rf"takes 2 feed value\(s\).*'x', 'k'.*got {count}$"):
        f(*[a, np.array([1.0]), a][:count])
    value, fed = f(a, np.array([1.0]))  # the right number: numpy's numbers
    assert value == np.sum(a * 2.0 + 1.0)
    np.testing.assert_array_equal(fed, a)
    with pytest.raises(GraphError, match=r"takes 0 feed value\(s\).*\(none\).*got 1$"):
        gc.function([y])(a)
