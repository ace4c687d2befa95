"""The numpy core's in-place optimizer updates (per variable and on one flat buffer for all)
give the bits of tf.train's formulas written out here in numpy; the one-reduction non-finite
check neither misses an overflowing update nor cries wolf on a sum that overflows."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from gradcli import backends, runner
from gradcli.backends.numpy_flat import FlatUpdate
from gradcli.core.tf_updates import rule_for
from gradcli.spec import load_spec_text


def f32(x: float) -> float:
    return float(np.float32(x))  # tf.train turns Python-float hyper-parameters into float32


def oracle_steps(name: str, hyper: dict, value, grads):
    """tf.train's CPU kernels in their op order, written here in plain numpy."""
    dt = value.dtype.type
    lr = f32(hyper["lr"])
    w, slots = value.copy(), {}
    b1p, b2p = np.float32(hyper.get("beta1", 0.9)), np.float32(hyper.get("beta2", 0.999))
    for g in grads:
        if name == "rmsprop":
            decay, mom_c, eps = f32(hyper.get("decay", 0.9)), f32(hyper.get("momentum", 0.0)), f32(1e-10)
            ms = slots.get("ms", np.ones_like(w))
            mom = slots.get("mom", np.zeros_like(w))
            ms = ms + (g * g - ms) * float(dt(1) - dt(decay))
            mom = mom * mom_c + g * lr / np.sqrt(ms + eps)
            slots.update(ms=ms, mom=mom)
            w = w - mom
        elif name == "adam":
            b1, b2, eps = f32(hyper.get("beta1", 0.9)), f32(hyper.get("beta2", 0.999)), f32(1e-8)
            lr_t = float(dt(lr) * np.sqrt(dt(1) - dt(b2p)) / (dt(1) - dt(b1p)))
            m, v = slots.get("m", np.zeros_like(w)), slots.get("v", np.zeros_like(w))
            m = m + (g - m) * float(dt(1) - dt(b1))
            v = v + (g * g - v) * float(dt(1) - dt(b2))
            slots.update(m=m, v=v)
            w = w - (m * lr_t) / (np.sqrt(v) + eps)
            b1p, b2p = b1p * np.float32(b1), b2p * np.float32(b2)
        elif name == "momentum":
            mc = f32(hyper["momentum"])
            acc = slots.get("acc", np.zeros_like(w)) * mc + g
            slots["acc"] = acc
            w = w - (g * lr + acc * mc * lr) if hyper.get("nesterov") else w - acc * lr
        else:
            w = w - g * lr
    return w


CASES = [("rmsprop", {"lr": 0.01}), ("rmsprop", {"lr": 0.1, "momentum": 0.5, "decay": 0.8}),
         ("adam", {"lr": 0.003}), ("momentum", {"lr": 0.1, "momentum": 0.9}),
         ("momentum", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("sgd", {"lr": 0.3})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,hyper", CASES)
def test_in_place_and_flat_updates_are_tf_formulas_bit_for_bit(name, hyper, dtype):
    rng = np.random.default_rng(3)
    shapes = [(5, 3), (3,), (3, 2)]
    values = [rng.normal(size=s).astype(dtype) for s in shapes]
    grads = [[(rng.normal(size=s) * 10.0 ** rng.integers(-3, 3)).astype(dtype) for s in shapes]
             for _ in range(4)]
    grads[1][0][0, 0] = -0.0  # a -0.0 gradient: mom * 0 + (-0.0) is +0.0, as the kernel has it
    expected = [oracle_steps(name, hyper, v, [g[i] for g in grads]) for i, v in enumerate(values)]

    per_var, slots = rule_for(name, hyper), [{} for _ in shapes]
    flat_rule, flat_slots = rule_for(name, hyper), [{} for _ in shapes]
    got, flat_vals, flat = list(values), list(values), FlatUpdate(["a", "b", "c"], values)
    assert flat.adopt(flat_slots)
    for step in grads:
        per_var.set_lr(hyper["lr"])
        got = [per_var.update_numpy(v, g, s, np.dtype(dtype)) for v, g, s in zip(got, step, slots)]
        per_var.finish_step()
        flat_rule.set_lr(hyper["lr"])
        flat_vals = flat.step(flat_rule, flat_vals, step)
        flat_rule.finish_step()
    for want, a, b in zip(expected, got, flat_vals):
        assert a.dtype == b.dtype == np.dtype(dtype)
        assert want.tobytes() == a.tobytes() == b.tobytes()
    # the per-variable slots are views of the flat buffers: the same state
    for s_flat, s_var in zip(flat_slots, slots):
        for key, value in s_flat.items():
            assert value.tobytes() == s_var[key].tobytes()


def test_flat_update_keeps_the_values_from_before_each_step_and_from_elsewhere():
    """Double-buffered: each step's new values go to another array than the variables' (the
    loop's snapshot of them stays intact), and values put back from elsewhere are not written."""
    hyper = {"lr": 0.1, "momentum": 0.5}
    rng = np.random.default_rng(5)
    start = [rng.normal(size=(4, 3)), rng.normal(size=(3,))]
    grads = [[rng.normal(size=v.shape) for v in start] for _ in range(5)]
    flat, slots = FlatUpdate(["a", "b"], start), [{}, {}]
    assert flat.adopt(slots)
    rule, values, seen = rule_for("rmsprop", hyper), list(start), []
    for step in grads:
        before = [v.tobytes() for v in values]
        new = flat.step(rule, values, step)
        assert [v.tobytes() for v in values] == before  # the snapshot of this step: intact
        assert not any(np.shares_memory(n, v) for n in new for v in values)
        seen.append((values, before))
        values = new
    back, back_bytes = seen[-1]  # a snapshot put back: views of the flat update's spare array
    for step in grads[:3]:
        values = flat.step(rule, back if step is grads[0] else values, step)
        assert [v.tobytes() for v in back] == back_bytes
    want = [oracle_steps("rmsprop", hyper, v, [g[i] for g in grads]) for i, v in enumerate(start)]
    fresh, rule2 = FlatUpdate(["a", "b"], start), rule_for("rmsprop", hyper)
    assert fresh.adopt([{}, {}])
    got = list(start)
    for step in grads:
        got = fresh.step(rule2, got, step)
    assert [w.tobytes() for w in want] == [g.tobytes() for g in got]


def test_flat_update_lays_out_again_after_a_fresh_start():
    rule, values = rule_for("rmsprop", {"lr": 0.01}), [np.ones((2, 2)), np.zeros(3)]
    grads = [np.full((2, 2), 0.5), np.arange(3.0)]
    flat = FlatUpdate(["a", "b"], values)
    slots = [{}, {}]
    assert flat.adopt(slots)
    first = flat.step(rule, values, grads)
    assert set(slots[0]) == {"rms", "momentum"} and flat.slot_dicts[0] is slots[0]
    fresh = [{}, {}]  # what a caller restarting the optimizer does
    assert flat.adopt(fresh)
    again = flat.step(rule, values, grads)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(first, again))
    assert not FlatUpdate.fits([np.ones(2), np.ones(2, np.float32)], [np.ones(2), np.ones(2, np.float32)])
    assert not FlatUpdate.fits([np.float64(1.0)], [np.float64(1.0)])


def test_the_trainee_lays_its_flat_buffers_out_again_when_its_slots_are_replaced():
    spec = """
inputs:
  w: [[0.5, -1.0], [2.0, 0.25]]
  b: [1.0, -2.0]
outputs:
  loss: sum(w * w) + sum(b * b * b)
train:
  optimizer: {name: rmsprop, lr: 0.01}
  steps: 2
"""
    trainee = backends.build(load_spec_text(spec, path="spec.yaml"), "numpy").trainee()
    start = trainee.read()

    def step():
        trainee.apply(trainee.loss_and_gradients()[1], 0.01)
        return {n: v.tobytes() for n, v in trainee.read().items()}

    first, second = step(), step()
    trainee.assign(start)
    trainee.slots = {n: {} for n in trainee.names}  # a fresh start: RMSProp's ms at ones again
    assert step() == first and step() == second
    # the rule's slots, read per variable, are the flat buffers' views: tf.train's ms
    w = start["w"]
    ms_w = np.ones_like(w)
    for _ in range(2):
        g = 2 * w
        ms_w = ms_w + (g * g - ms_w) * (1.0 - f32(0.9))
        w = w - f32(0.01) * g / np.sqrt(ms_w + f32(1e-10))
    np.testing.assert_allclose(trainee.slots["w"]["rms"], ms_w, rtol=1e-12)


def run(text: str):
    return runner.run(load_spec_text(text, path="spec.yaml"), backend="numpy", numeric=False)


def test_an_overflowing_update_is_still_found_as_the_optimizers():
    # the loss w * 1e300 is finite at w = 0.5, but the step w - lr * 1e300 (lr 1e30) is -inf
    spec = """
inputs:
  w: [0.5, 0.25]
  x: {value: [1.0e+300, 1.0], trainable: false}
outputs:
  loss: sum(w * x)
train:
  optimizer: {name: sgd, lr: 1.0e+30}
  steps: 3
"""
    train = run(spec).train
    born = train.nonfinite
    assert born is not None and born.step == 0
    assert (born.op, born.expr, born.tensor) == ("sgd", "optimizer sgd", "w")
    assert train.stopped["step"] == 1 and train.loss[0] == pytest.approx(0.5e300)


def test_a_sum_that_overflows_is_not_a_non_finite_step():
    # every element finite, their sum inf: the cheap check's "maybe" must come to nothing
    spec = """
inputs:
  w: [1.5e+308, 1.5e+308, 2.0]
outputs:
  loss: mean(w * 0.0) + w[2] * w[2]
train:
  optimizer: {name: rmsprop, lr: 0.01}
  steps: 3
"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train = run(spec).train
    assert train.nonfinite is None and train.stopped is None and train.steps == 3
    assert train.final["w"][0] == 1.5e308


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_one_hot_of_integer_labels_is_rows_of_the_identity(dtype):
    from gradcli.ops.kernels import one_hot
    rng = np.random.default_rng(0)
    low = 0 if dtype is np.uint8 else -12
    # tf.one_hot: a label outside [0, 10) picks the row of zeros appended to the identity
    rows = np.vstack([np.eye(10, dtype=np.float32), np.zeros((1, 10), np.float32)])
    for shape in [(64,), (3, 4), (0,), ()]:
        v = rng.integers(low, 12, shape).astype(dtype)
        got = one_hot(v, 10, np.float32)
        want = rows[np.where((v >= 0) & (v < 10), v, 10).astype(np.int64)]
        assert got.dtype == np.float32 and got.shape == want.shape and np.array_equal(got, want)


def test_gradients_that_are_a_constants_or_a_variables_own_array_stay_untouched():
    # d/dw sum(w * c) is c's own array and d/dv sum(v * u) is u's: the step reads the replay's
    # results uncopied, so the update and the in-place clip must leave c and u alone
    spec = """
inputs:
  w: [0.5, -0.25]
  v: [1.0, 2.0, 3.0]
  u: {value: [0.75, -1.5, 2.0], trainable: false}
outputs:
  loss: sum(w * [3.0, -2.0]) + sum(v * u)
train:
  optimizer: {name: rmsprop, lr: 0.1}
  steps: 4
  constraints:
    w: clip(w, -0.6, 0.6)
    v: clip(v, 0.0, 2.5)
"""
    train = run(spec).train
    lr, decay, eps = f32(0.1), 1.0 - f32(0.9), f32(1e-10)
    w, v = np.array([0.5, -0.25]), np.array([1.0, 2.0, 3.0])
    gw, gv = np.array([3.0, -2.0]), np.array([0.75, -1.5, 2.0])
    ms_w, ms_v = np.ones(2), np.ones(3)
    for _ in range(4):  # tf.train's RMSProp (momentum 0: mom * 0 + step), then the clips
        ms_w, ms_v = ms_w + (gw * gw - ms_w) * decay, ms_v + (gv * gv - ms_v) * decay
        w = np.clip(w - (0.0 + gw * lr / np.sqrt(ms_w + eps)), -0.6, 0.6)
        v = np.clip(v - (0.0 + gv * lr / np.sqrt(ms_v + eps)), 0.0, 2.5)
    assert train.final["w"].tobytes() == w.tobytes() and train.final["v"].tobytes() == v.tobytes()
    program = backends.build(load_spec_text(spec, path="spec.yaml"), "numpy")
    trainee = program.trainee()
    for _ in range(4):
        trainee.feed(None)
        _, grads = trainee.loss_and_gradients()
        trainee.apply(grads, 0.1)
        trainee.assign(trainee.evaluate("constraints"))
    np.testing.assert_array_equal(program.leaves["u"].numpy(), [0.75, -1.5, 2.0])
    np.testing.assert_array_equal(trainee.loss_and_gradients()[1][1][0], [3.0, -2.0])
