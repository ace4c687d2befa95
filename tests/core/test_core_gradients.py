"""gc.gradients as tf.gradients: alignment, sums, grad_ys, stop_gradients, unconnected, nesting."""
from __future__ import annotations

import numpy as np
import pytest
from core_helpers import assert_close, fd_gradients

import gradcli as gc
from gradcli.core import graph
from gradcli.errors import GradientError, UnconnectedGradientError


def test_result_is_a_list_aligned_with_xs():
    x, y, z = gc.variable(2.0), gc.variable(3.0), gc.variable(5.0)
    out = x * y * y
    grads = gc.gradients(out, [z, y, x])
    assert grads[0] is None
    assert [g.numpy() for g in grads[1:]] == [12.0, 9.0]
    single = gc.gradients(out, x)
    assert isinstance(single, list) and len(single) == 1 and single[0].numpy() == 9.0


def test_gradients_of_several_ys_are_summed():
    x = gc.variable([1.0, 2.0])
    y1, y2 = x * x, gc.sin(x)
    (g,) = gc.gradients([y1, y2], x)
    assert_close(g.numpy(), 2 * x.numpy() + np.cos(x.numpy()))


def test_grad_ys_weight_each_output():
    x = gc.variable([1.0, 2.0])
    y1, y2 = x * x, x * 3.0
    (g,) = gc.gradients([y1, y2], [x], grad_ys=[[10.0, 100.0], None])
    assert_close(g.numpy(), [10 * 2 + 3, 100 * 4 + 3])
    (g,) = gc.gradients(y1, x, grad_ys=gc.constant(0.5))  # a scalar weight is broadcast
    assert_close(g.numpy(), [1.0, 2.0])
    with pytest.raises(GradientError, match=r"grad_ys for .* has shape \(3,\); it must match "
                                            r"the output's shape \(2,\) or be a scalar"):
        gc.gradients(y1, x, grad_ys=[[1.0, 2.0, 3.0]])
    with pytest.raises(GradientError, match="grad_ys has 1 entries for 2 ys; give one per y"):
        gc.gradients([y1, y2], x, grad_ys=[1.0])


def test_stop_gradients_as_in_the_tensorflow_docs():
    a = gc.constant(0.0)
    b = 2 * a
    stopped = gc.gradients(a + b, [a, b], stop_gradients=[a, b])
    assert [g.numpy() for g in stopped] == [1.0, 1.0]
    full = gc.gradients(a + b, [a, b])
    assert [g.numpy() for g in full] == [3.0, 1.0]


def test_stop_gradients_on_an_intermediate_holds_it_constant():
    x = gc.variable(3.0)
    h = x * x
    y = h * x
    assert gc.gradients(y, x)[0].numpy() == 27.0
    assert gc.gradients(y, x, stop_gradients=[h])[0].numpy() == 9.0
    assert gc.gradients(h, x, stop_gradients=[h]) == [None]


def test_stop_gradients_on_one_output_of_a_multi_output_op():
    x = gc.variable([3.0, 1.0, 2.0])
    zeroed, index = gc.zero_out(x)
    # the op is reached through the index as well, but the stopped output passes nothing back
    y = gc.sum(gc.cast(index, "float64") + zeroed * 2.0)
    assert_close(gc.gradients(y, x)[0].numpy(), [2.0, 0.0, 0.0])
    (g,) = gc.gradients(y, x, stop_gradients=[zeroed], unconnected_gradients="zero")
    assert_close(g.numpy(), [0.0, 0.0, 0.0])
    (n,) = gc.numeric_gradients(y, x, stop_gradients=[zeroed], unconnected_gradients="zero")
    assert_close(n, [0.0, 0.0, 0.0])
    # asked for as well as stopped: it gets its gradient, and passes none on
    gx, gz = gc.gradients(y, [x, zeroed], stop_gradients=[zeroed])
    assert gx is None
    assert_close(gz.numpy(), [2.0, 2.0, 2.0])


def test_unconnected_gradients_none_zero_error():
    x, unused = gc.variable([1.0, 2.0]), gc.variable([[1.0, 2.0, 3.0]], name="unused")
    y = gc.sum(x * x)
    assert gc.gradients(y, [x, unused])[1] is None
    zero = gc.gradients(y, [x, unused], unconnected_gradients="zero")[1]
    assert zero.shape == (1, 3) and zero.dtype == np.float64
    assert_close(zero.numpy(), np.zeros((1, 3)), rtol=0, atol=0)
    with pytest.raises(UnconnectedGradientError, match="unused is not connected to the outputs"):
        gc.gradients(y, [x, unused], unconnected_gradients="error")
    with pytest.raises(GradientError, match="unconnected_gradients must be one of none, zero, "
                                            "error, got 'zeros'"):
        gc.gradients(y, x, unconnected_gradients="zeros")
    n = gc.variable(np.array([1, 2]))  # integers are never differentiable
    assert gc.gradients(gc.sum(gc.cast(n, "float64") * x), n) == [None]


def test_gradients_arriving_by_several_paths_are_summed():
    x = gc.variable(1.5)
    y = 2 * x
    z = y + y + y + y
    gx, gy = gc.gradients(z, [x, y])
    assert (gx.numpy(), gy.numpy()) == (8.0, 4.0)
    w = x * x + gc.sin(x) * x
    assert_close(gc.gradients(w, x)[0].numpy(), 2 * 1.5 + np.cos(1.5) * 1.5 + np.sin(1.5))


def test_a_y_that_is_an_x_gets_ones():
    x = gc.variable([1.0, 2.0])
    assert_close(gc.gradients(x, x)[0].numpy(), [1.0, 1.0])
    assert_close(gc.gradients([x, x * 3.0], x)[0].numpy(), [4.0, 4.0])


def test_gradients_of_gradients():
    x = gc.variable([1.0, 2.0, -0.5])
    (g,) = gc.gradients(gc.sum(x ** 3), x)
    (h,) = gc.gradients(g, x)
    (t,) = gc.gradients(h, x)
    assert_close(g.numpy(), 3 * x.numpy() ** 2)
    assert_close(h.numpy(), 6 * x.numpy())
    assert_close(t.numpy(), [6.0, 6.0, 6.0])
    # mixed partials: d/dy (d/dx x*y*y) = 2y
    a, b = gc.variable(2.0), gc.variable(3.0)
    (ga,) = gc.gradients(a * b * b, a)
    assert gc.gradients(ga, b)[0].numpy() == 6.0


def test_gradients_are_graph_nodes_that_follow_assign():
    w = gc.variable([1.0, -2.0])
    (g,) = gc.gradients(gc.sum(gc.tanh(w)), w)
    before = g.numpy()
    w.assign([0.0, 0.5])
    assert_close(g.numpy(), 1 - np.tanh([0.0, 0.5]) ** 2)
    assert not np.allclose(before, g.numpy())


def test_the_walk_visits_only_ops_between_xs_and_ys(gradient_name):
    name = gradient_name("Vanishing")
    gc.register_gradient(name)(lambda op, g: g)
    a, b = gc.variable(2.0), gc.variable(3.0)
    with gc.gradient_override_map({"Square": name}):
        sq = gc.square(a)
    gc.unregister_gradient(name)  # sq's op now has no rule at all
    y = sq * b
    assert gc.gradients(y, b)[0].numpy() == 4.0  # not on the path from b: never visited
    with pytest.raises(GradientError, match=f"no gradient is registered under '{name}' "
                                            r"\(needed by op square_\d+ of type 'square'\)"):
        gc.gradients(y, a)
    # a stopped tensor is never walked through either
    assert gc.gradients(y, a, stop_gradients=[sq]) == [None]


def test_xs_and_ys_must_be_tensors():
    x = gc.variable(1.0)
    with pytest.raises(GradientError, match="xs must be tensors, got float"):
        gc.gradients(x * 2.0, [1.0])
    with pytest.raises(GradientError, match="ys must be tensors, got ndarray"):
        gc.gradients(np.ones(2), x)


# ----- numeric gradients -----
def test_numeric_gradients_match_the_analytic_ones():
    x = gc.variable([0.3, -1.2, 2.0])
    w = gc.variable([[1.0], [2.0]])
    y = gc.sum(gc.tanh(x * w) * gc.exp(x / 4.0), axis=1)
    nx, nw = gc.numeric_gradients(y, [x, w], grad_ys=[[1.0, -2.0]])
    ax, aw = gc.gradients(y, [x, w], grad_ys=[[1.0, -2.0]])
    assert_close(nx, ax.numpy(), rtol=1e-6)
    assert_close(nw, aw.numpy(), rtol=1e-6)
    assert_close(nx, fd_gradients(y, x, [[1.0, -2.0]])[0], rtol=1e-6)


def test_numeric_gradients_replay_and_create_no_ops():
    x = gc.variable(np.linspace(-1, 1, 50))
    y = gc.sum(gc.sigmoid(x) * x)
    gc.numeric_gradients(y, x)
    before = next(graph._uids)
    (n,) = gc.numeric_gradients(y, x)
    assert next(graph._uids) == before + 1
    s = 1 / (1 + np.exp(-x.numpy()))
    assert_close(n, s + x.numpy() * s * (1 - s), rtol=1e-6)


def test_numeric_gradients_hold_stop_gradients_and_report_unconnected():
    a = gc.constant(0.0)
    b = 2 * a
    assert gc.numeric_gradients(a + b, [a, b], stop_gradients=[a, b]) == [1.0, 1.0]
    assert_close(gc.numeric_gradients(a + b, [a, b]), [3.0, 1.0])
    x, free = gc.variable([1.0, 2.0]), gc.variable(1.0, name="free")
    y = gc.sum(x)
    assert gc.numeric_gradients(y, [free])[0] is None
    assert gc.numeric_gradients(y, [free], unconnected_gradients="zero")[0] == 0.0
    with pytest.raises(UnconnectedGradientError, match="free is not connected to the outputs"):
        gc.numeric_gradients(y, [free], unconnected_gradients="error")


def test_numeric_gradients_eps_controls_the_step():
    x = gc.variable(1.0)
    y = x ** 3
    coarse = gc.numeric_gradients(y, x, eps=0.1)[0]
    assert_close(coarse, 3.0 + 0.1 ** 2, rtol=1e-9)  # central difference of x^3: 3x^2 + h^2
    assert_close(gc.numeric_gradients(y, x)[0], 3.0, rtol=1e-8)


def test_directional_estimate_for_large_inputs():
    rng = np.random.default_rng(5)
    x = gc.variable(rng.normal(size=(40, 30)))
    y = gc.sum(gc.sin(x) * x)
    (analytic,) = gc.gradients(y, x)
    (estimate,) = gc.numeric_gradients(y, x, max_probes=100, directions=8, seed=3)
    projection = gc.directional_projection(analytic.numpy(), directions=8, seed=3)
    assert estimate.shape == x.shape
    assert_close(estimate, projection, rtol=1e-5, atol=1e-7)
    # it is a projection onto 8 directions, not the gradient itself
    assert np.linalg.norm(projection) < 0.5 * np.linalg.norm(analytic.numpy())
    other = gc.directional_projection(analytic.numpy(), directions=8, seed=4)
    assert not np.allclose(other, projection)
    # along each probed direction the estimate and the gradient agree
    basis = np.random.default_rng(3).standard_normal((8, 40, 30))
    assert_close(np.tensordot(basis, estimate, 2), np.tensordot(basis, analytic.numpy(), 2),
                 rtol=1e-5)
