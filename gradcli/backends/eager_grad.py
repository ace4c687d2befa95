"""grad(y, x) on an eager framework: the part of EagerBuilder that computes a gradient as a
value while the spec is being built.

The kit differentiates y with its own machinery, differentiably (kit.gradient:
torch.autograd.grad with create_graph, a jax.vjp inside the trace, a nested
GradientTape); y is built again from the kit's handle on x, with the lets
between them (interpret.Interpreter._rebuilt), so the framework sees y as a
function of x. Overrides hold inside grad() on every pass; on the "true" pass
the ones built inside it answer the outer (true) differentiation with the
derivative of their forward function (_dual).
"""
from __future__ import annotations

from contextlib import contextmanager

from .kit import summed_vjp


class GradOfBuild:
    """Mixed into EagerBuilder; uses its kit, mode, flags and _custom/_record/_fit."""

    def grad(self, y_at, x):
        """The framework's own gradient of sum(y) with respect to x, built so that it can be
        differentiated again (create_graph, a nested tape, a vjp inside the traced function).

        y is built again from x inside the framework's recording (kit.gradient); always with
        the overrides in force, in a "true" build too: grad()'s value is the overridden
        gradient on every pass, and the true pass differentiates that computation. The
        result counts as connected to x and to y (the core's `grad` op records the same).
        """
        saved = self.mode, self.inspect, self.log, self.vjps
        # inspect and the non-finite log would read traced values (jax): grad() is checked
        # as one op, below
        self.mode, self.inspect, self.log, self.vjps = "overridden", False, None, False

        scopes = self.scopes

        def build(x_in):
            if x_in is not x:  # the framework's own handle on x: it carries x's gradient
                self._record([x], (x_in,), (True,))
            y = y_at(x_in)
            # override_map is about the spec's own ops: the backward pass's (a registered
            # rule's included) are built outside every scope, as the core builds them
            self.scopes = []
            return y

        self.inner += 1
        try:
            x_in, y, g = self.kit.gradient(build, x)
        finally:
            self.mode, self.inspect, self.log, self.vjps = saved
            self.scopes = scopes
            self.inner -= 1
        g = self._fit(g, x, 0, ("grad", "grad"), True)
        self._record([x_in, y], (g,), (True, True))
        if self.log is not None and not self.vjps:
            self.log.op("grad", self.place, [x], (g,))
        return g

    def checkpoint(self):
        return self.drawn, len(self.scopes)

    @contextmanager
    def rebuilding(self, mark):
        """Lets built again for grad(): the same draws as the first time, counted and
        inspected once (the first time), and a fed let's value kept with its path from x
        (stop_gradients and wrt never name them: spec/gradexpr.py refuses it)."""
        saved = self.drawn, self.count, self.inspect, self.rebuild, self.scopes
        drawn, depth = mark
        # the scopes in force when the let was first built (the spec-wide ones), not those
        # of the let or output whose grad() builds it again
        self.drawn, self.count, self.inspect, self.rebuild = drawn, False, False, True
        self.scopes = self.scopes[:depth]
        try:
            yield
        finally:
            self.drawn, self.count, self.inspect, self.rebuild, self.scopes = saved

    def _dual(self, forward, rule):
        """On the true pass, an override built inside grad() gives grad()'s value its rule;
        the true pass itself (the outermost differentiation, once grad() is done) goes
        through it by the framework's own derivative of its forward."""
        kit = self.kit

        def backward(xs, outs, dys):
            if self.inner:
                return rule(xs, outs, dys)
            floats = [i for i, x in enumerate(xs) if self.is_float(x)]
            return summed_vjp(kit, forward, xs, floats, dys)[1]

        return backward
