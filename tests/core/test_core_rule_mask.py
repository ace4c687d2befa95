"""Rules are asked only for the inputs a gradient reaches (registry.needed), and the gradients
built that way equal torch autograd's on graphs mixing variables and constants."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import gradcli as gc
from gradcli.core import ops_math as M
from gradcli.core.registry import needed

X = np.array([-1.5, -0.3, 0.2, 0.7, 1.9])
C = np.array([0.5, -2.0, 1.5, 0.25, 3.0])


@pytest.fixture
def recorded():
    seen = []

    @gc.register_gradient("record_mask")
    def _record(op, g):
        seen.append(needed(op))
        return (g,) * len(op.inputs)
    yield seen
    gc.unregister_gradient("record_mask")


@pytest.mark.parametrize("build, mask", [
    (lambda x, c: x * c, (True, False)),
    (lambda x, c: c * x, (False, True)),
    (lambda x, c: x * x, (True, True)),
    (lambda x, c: gc.variable(X) * c + x, (False, False)),  # a path around the mul only
])
def test_a_rule_is_told_which_inputs_need_a_gradient(recorded, build, mask):
    x, c = gc.variable(X), gc.constant(C)
    with gc.gradient_override_map({"mul": "record_mask"}):
        y = build(x, c)
    gc.gradients(gc.sum(y), [x])
    assert recorded == ([mask] if any(mask) else [])  # no input reached: the rule is not run


def test_the_mask_follows_the_xs_asked_for(recorded):
    x, c = gc.variable(X), gc.constant(C)
    with gc.gradient_override_map({"mul": "record_mask"}):
        y = x * c
    gc.gradients(gc.sum(y), [c])
    gc.gradients(gc.sum(y), [x, c])
    assert recorded == [(False, True), (True, True)]


def test_needed_outside_a_walk_is_every_input():
    x, c = gc.variable(X), gc.constant(C)
    assert needed((x * c).op) == (True, True)


def test_no_gradient_op_is_built_for_a_constant(monkeypatch):
    built = []
    for name in ("neg", "div", "where"):
        real = getattr(M, name)
        monkeypatch.setattr(M, name, lambda *a, _real=real, _name=name: (built.append(_name),
                                                                         _real(*a))[1])
    x, c = gc.variable(X), gc.constant(C)
    y = gc.sum(x / c - c + gc.maximum(x, c))
    (gx,) = gc.gradients(y, [x])
    # x / c: one div for x (c's would be div, mul, neg); - c: no neg; maximum: one where.
    assert sorted(built) == ["div", "where"]
    np.testing.assert_allclose(gx.numpy(), 1 / C + (X >= C), rtol=1e-15)


def _torch_grads(fn, wrt):
    xt = torch.tensor(X, requires_grad="x" in wrt)
    ct = torch.tensor(C, requires_grad="c" in wrt)
    fn(xt, ct, torch).sum().backward()
    return [(xt if w == "x" else ct).grad.numpy() for w in wrt]


def _f(x, c, lib):
    # every multi-input rule that the mask prunes, with constants as operands on either side
    if lib is torch:
        # tf.clip_by_value = maximum(minimum(x, hi), lo), gradcli's convention where lo > hi
        where, clip, mx, mn = torch.where, lambda v, lo, hi: torch.maximum(torch.minimum(v, hi), lo), \
            torch.maximum, torch.minimum
        mm = torch.matmul
        cat = torch.cat
    else:
        where, clip, mx, mn, mm, cat = gc.where, gc.clip, gc.maximum, gc.minimum, gc.matmul, gc.concat
    a = x * c - c / (x * x + 1.0) + (x * 0.5) ** 2.0 + 3.0 ** (x * 0.1) + c ** 2.0
    b = where(x > 0.0, x * c, c) + clip(x, c * 0.1 - 0.5, c) + mx(x, c) * mn(c, x)
    m = mm(c, x) * x + mm(x * 2.0, c)
    d = cat([x * c, c, x], 0) * cat([c, x, c], 0)
    return a + b + m + d[:5] + d[5:10] - d[10:]


@pytest.mark.parametrize("wrt", [("x",), ("c",), ("x", "c")])
def test_gradients_with_constants_equal_torch(wrt):
    x, c = gc.variable(X), gc.variable(C)  # c is a variable, so that it can be asked for
    y = gc.sum(_f(x, c, gc))
    got = gc.gradients(y, [x if w == "x" else c for w in wrt])
    true = gc.true_gradients(y, [x if w == "x" else c for w in wrt])
    want = _torch_grads(_f, wrt)
    for g, t, w in zip(got, true, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(t.numpy(), w, rtol=1e-12, atol=1e-12)


def test_second_derivatives_through_pruned_rules_equal_torch():
    x, c = gc.variable(X), gc.constant(C)
    y = gc.sum(gc.tanh(x * c) + gc.sigmoid(x) * c + gc.sqrt(x * x + c * c) + 1.0 / (x * x + 2.0))
    (g,) = gc.gradients(y, [x])
    (h,) = gc.gradients(gc.sum(g * c), [x])
    xt = torch.tensor(X, requires_grad=True)
    ct = torch.tensor(C)
    yt = (torch.tanh(xt * ct) + torch.sigmoid(xt) * ct + torch.sqrt(xt * xt + ct * ct)
          + 1.0 / (xt * xt + 2.0)).sum()
    (gt,) = torch.autograd.grad(yt, xt, create_graph=True)
    (ht,) = torch.autograd.grad((gt * ct).sum(), xt)
    np.testing.assert_allclose(g.numpy(), gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-12)
