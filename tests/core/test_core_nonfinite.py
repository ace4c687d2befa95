"""gc.find_nonfinite and op origins: where a NaN or an infinity was born."""
import numpy as np

import gradcli as gc


def test_forward_birth_is_the_log_that_met_zero():
    x = gc.variable([0.0, 2.0])
    with gc.origin("the log"):
        a = gc.log(x)
    y = gc.sum(x * a)
    with np.errstate(all="ignore"):
        assert np.isnan(np.sum(np.array([0.0, 2.0]) * np.log([0.0, 2.0])))  # numpy's oracle
    hit = gc.find_nonfinite(y)
    assert hit.op is a.op and hit.origin == "the log"
    assert (hit.value, hit.born) == ("nan", "-inf")
    assert gc.find_nonfinite([y * 0 + 1, a])[0] is not None  # NaN * 0 stays NaN


def test_finite_fetches_give_none_even_with_a_masked_birth_inside():
    x = gc.variable([0.0, 2.0])
    z = gc.sum(gc.where(gc.greater(x, 0), gc.log(x), 0.0))
    assert gc.find_nonfinite(z) is None
    assert gc.find_nonfinite([z]) == [None]


def test_true_backward_birth_carries_the_forward_origin():
    # d/dx where(x > 0, log(x), 0) at x = 0: where passes 0 to log's branch, log's gradient
    # is 0 / x = 0 / 0 = NaN, although the forward value is finite.
    x = gc.variable([0.0, 2.0])
    with gc.origin("log(x)"):
        branch = gc.log(x)
    with gc.origin("where"):
        z = gc.sum(gc.where(gc.greater(x, 0), branch, 0.0))
    g, = gc.true_gradients(z, [x])
    value = gc.evaluate(g)
    assert np.isnan(value[0]) and value[1] == 0.5
    hit = gc.find_nonfinite(g)
    assert hit.origin == "log(x)" and hit.op.type == "div" and hit.born == "nan"


def test_a_fed_infinity_is_its_own_birth():
    x = gc.variable([1.0, 2.0])
    y = x * 0.0
    hit = gc.find_nonfinite(y, feed={x: [np.inf, 1.0]})
    assert hit.op is x.op and hit.born == "inf" and hit.value == "nan"
    assert gc.find_nonfinite(y) is None  # the variable itself is unchanged
