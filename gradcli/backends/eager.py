"""The spec constructs on an eager framework, written once for torch, jax and tensorflow.

A framework backend supplies a `Kit`: its tensors, one raw forward op per
op of the table (gradcli/ops), and three mechanisms of its own: a custom-gradient op
(torch.autograd.Function, jax.custom_vjp, tf.custom_gradient), stop_gradient
(detach, lax.stop_gradient, tf.stop_gradient) and a vector-Jacobian product
(torch.autograd.grad, jax.vjp, tf.GradientTape). This module maps every spec
construct onto those:

- override_map entries and `register`ed or built-in named gradients: the op
  runs inside the kit's custom-gradient op, whose backward evaluates the rule;
- functions: the forward is built as usual, then a custom-gradient op passes
  its result on and, going backward, evaluates the function's own gradients;
- grad_pass_through and reverse_gradient: custom-gradient ops too;
- stop_gradient: the kit's own; `stop_gradients` (the call option): the named
  tensors are replaced by stopped copies as they are bound;
- a gradient with respect to a let: a probe of -0.0 is added where the let is
  bound (exact: x + -0.0 == x, signed zeros included) and differentiated;
- "true" gradients: the forward is built a second time with every
  gradient-altering construct replaced by its forward function.

Each build records which tensor fed which op (connectivity.Graph) so that
"unconnected" means what the numpy core says on every framework, whatever the
framework's own convention (jax has no unconnected gradients at all).
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Callable

import numpy as np

from ..core import budget as budgets
from ..core import shapes
from ..core.ops_array import drawn  # the same numbers as the core's draws
from ..errors import GradientError
from ..lang.interpret import Interpreter
from ..lang.rules import builtin
from ..ops import BUILTINS, OPS, op_key
from .builder import SpecBuilder
from .connectivity import Graph
from .eager_args import Arguments
from .eager_grad import GradOfBuild
from .eager_nonfinite import At, checked_vjp
from .kit import along_axis, sum_to, zero_out


class _BuildOps:
    """A build's ops as a formula's `o`: o.mul is the builder's mul (bound and checked)."""

    __slots__ = ("_builder",)

    def __init__(self, builder) -> None:
        self._builder = builder

    def __getattr__(self, name: str):
        return self._builder.ops[name]


# ----- the interpreter's builder on a kit -----
class EagerBuilder(Arguments, GradOfBuild, SpecBuilder):
    """One build of the spec on a kit, in 'overridden' or 'true' mode."""

    def __init__(self, program, mode: str, *, probes=None, stops=(), feeds=None,
                 record: bool = False, inspect: bool = False, count: bool = False,
                 log=None, vjps: bool = False) -> None:
        super().__init__(program.dtype)
        self.program, self.kit, self.mode = program, program.kit, mode
        self.true_pass = mode == "true"
        self.probes, self.stops, self.feeds = probes or {}, set(stops), feeds or {}
        self.graph = Graph() if record else None
        self.inspect, self.count = inspect, count
        self.scopes: list[dict] = []
        self.aliases: dict[str, str] = {}
        self.drawn = 0   # random draws made so far: each seeds its own generator
        self.rebuild = False  # building lets again for grad(y, x) (see rebuilding)
        self.inner = 0        # grad() calls under way: their backward passes use the rules
        self.forwards = 0     # function forwards under way: their own gradient replaces their ops'
        self.made: set[int] = set()  # ids of the constants this build made from literals
        self.interpreter: Interpreter | None = None
        budget = budgets.active()  # each build gets its own ledger under the run's budget
        self.memory = budget.fresh() if budget is not None else None
        self.log, self.vjps = log, vjps  # a BirthLog: check ops (vjps: their gradients too)
        self.place = None                # the spec sub-expression being built (lang/places.py Place)
        self.ops = {name: self._make(spec) for name, spec in OPS.items() if not spec.interpreted}

    def finish(self) -> None:
        """The forward is built: what runs from now on (backward rules) is not recorded."""
        self.graph, self.inspect, self.count = None, False, False
        self.vjps = False  # backward rules' own ops are checked as they run, not wrapped
        if self.log is not None:
            self.log.in_backward = True

    def origin(self, place):
        return At(self, place)

    # ----- the kit's tensors (constants and dtype helpers: SpecBuilder) -----
    def tensor(self, array):
        return self._made(self.kit.constant(array))

    def _made(self, t):
        if self.inspect:
            self.made.add(id(t))
            self.program.keep(t)
        return t

    def is_tensor(self, value) -> bool:
        return self.kit.is_tensor(value)

    def dtype_name(self, value) -> str:
        return self.kit.dtype_name(value)

    def shape(self, value) -> tuple:
        return self.kit.shape(value)

    def to_numpy(self, value):
        return self.kit.numpy(value)

    @contextmanager
    def override_scope(self, entries):
        self.scopes.append({op_key(e.op): e for e in entries})
        try:
            yield
        finally:
            self.scopes.pop()

    def call_function(self, spec, args, evaluate):
        self.forwards += 1
        try:
            bound, result = self.function_forward(spec, args, evaluate)
        finally:
            self.forwards -= 1
        if self.mode == "true":
            return result
        ys, single = self.outputs(result)
        n = len(args)
        # The lets ride along as inputs that get no gradient, so the backward reads them from
        # the custom op's own residuals (jax's custom_vjp must not close over traced values),
        # never recomputes them (a let's random draw would be drawn again).
        names = [name for name, _ in spec.lets if self.kit.is_tensor(bound[name])]
        lets = [bound[name] for name in names]
        k = n + len(lets)

        def backward(xs, outs, dys):
            if len(spec.grads) != n:
                raise GradientError(f"the gradient function of custom_gradient {spec.name!r} returned "
                                    f"{len(spec.grads)} gradient(s); the function has {n} input(s) "
                                    f"({', '.join(spec.args)}): return one gradient per input, "
                                    "None where an input gets none")
            seen = {**bound, **dict(zip(spec.args, xs[:n])), **dict(zip(names, xs[n:k]))}
            return (self.function_gradients(spec, seen, dys, evaluate)
                    + [None] * (len(lets) + len(ys)))

        pattern = [i < len(spec.grads) and spec.grads[i] is not None for i in range(n)]
        outs = self._custom([*args, *lets, *ys], lambda *vs: vs[k:], backward,
                            pattern + [False] * (len(lets) + len(ys)),
                            (spec.name, "custom_gradient"), strict=True)
        return outs[0] if single else outs

    def pass_through(self, fn, x):
        y = self.as_tensor(fn(x))
        if self.mode == "true":
            return y
        return self._custom([x, y], lambda x_, y_: (y_,), lambda xs, outs, dys: [dys[0], None],
                            (True, False), ("grad_pass_through", "grad_pass_through"))[0]

    # ----- binding names (the interpreter calls this for every let and output) -----
    def bind(self, names, value, env):
        if len(names) == 1:
            return self._bind_one(names[0], value, env)
        try:
            values = list(value)
        except TypeError:
            return value
        return tuple(self._bind_one(n, v, env) for n, v in zip(names, values)) + tuple(values[len(names):])

    def _bind_one(self, name, value, env):
        kit = self.kit
        if not kit.is_tensor(value):
            return value
        for other, seen in env.items():
            if seen is value:  # the same tensor under a second name
                self.aliases[name] = self.aliases.get(other, other)
                return value
        if name in self.feeds:
            fed = kit.constant(np.asarray(self.feeds[name], dtype=kit.dtype_name(value)))
            if self.rebuild and self.is_float(value):  # the fed value, still a function of x
                fed = kit.ops["add"](value, kit.stop_gradient(kit.ops["sub"](fed, value)))
            value = fed
        elif name in self.stops and self.is_float(value):  # never a let grad() builds again
            value = kit.stop_gradient(value)
        probe = self.probes.get(name)
        if probe is not None:
            tapped = kit.ops["add"](value, probe)
            self._record([value, probe], (tapped,), (True, True))
            value = tapped
        return value

    # ----- ops -----
    def _make(self, spec) -> Callable:
        name = spec.name
        if spec.draw:
            return functools.partial(self._random, name)
        if spec.composite:
            return self._composite(spec)
        if name == "zero_out":
            raw = functools.partial(zero_out, self.kit)
        elif spec.family == "along_axis":
            raw = functools.partial(along_axis, self.kit, name)
        elif name in ("stop_gradient", "reverse_gradient"):
            raw = _first_copy(self.kit)  # their forward function; the gradient is set in _apply
        else:
            raw = self.kit.ops[name]

        def op(*args, **kwargs):
            inputs, attrs = self._bind_args(spec, args, kwargs)
            return self._apply(name, raw, inputs, attrs)

        op.__name__ = name
        return op

    def _composite(self, spec) -> Callable:
        """A composite (clip_by_norm): its formula over this build's own ops, so that each part
        is an op of the spec as in the core (overrides, connectivity and checks reach it)."""
        own = _BuildOps(self)
        attributes = [p for p in spec.params if p not in spec.tensor_params]

        def op(*args, **kwargs):
            values = {**spec.defaults, **dict(zip(spec.params, args)), **kwargs}
            tensors = [values[p] for p in spec.tensor_params]
            first = tensors[0]
            if self.is_tensor(first) and self.is_float(first):
                # tf.clip_by_norm casts an integer clip_norm tensor to t's dtype (as the core)
                tensors[1:] = [own.cast(v, dtype=self.dtype_name(first))
                               if self.is_tensor(v) and self.dtype_name(v).startswith(("int", "uint"))
                               else v for v in tensors[1:]]
            return spec.formula(own, *tensors, **{p: values[p] for p in attributes})

        op.__name__ = spec.name
        return op

    def _apply(self, name, raw, inputs, attrs):
        kit = self.kit
        self._admit(name, inputs, attrs)
        gradient = self._override(name) if self.scopes and self.mode == "overridden" else None
        if gradient is not None:
            pattern, rule, strict = self._rule(gradient, name, attrs, len(inputs))
            outs = self._custom(inputs, lambda *xs: raw(*xs, **attrs), rule, pattern,
                                (gradient, name), strict=strict)
            return outs[0] if len(outs) == 1 else outs
        if self.mode == "overridden" and name == "stop_gradient" and self.inner and self.true_pass:
            # inside grad() on the true pass: stopped for grad()'s value, not for the true pass
            return self._custom(inputs, lambda x: (kit.copy(x),), lambda xs, outs, dys: [None],
                                (False,), ("stop_gradient", name))[0]
        if self.mode == "overridden" and name == "stop_gradient":
            out, pattern = kit.stop_gradient(inputs[0]), (False,)
        elif self.mode == "overridden" and name == "reverse_gradient":
            scale = float(attrs["scale"])
            return self._custom(inputs, lambda x: (kit.copy(x),), lambda xs, outs, dys: [dys[0] * -scale],
                                (True,), ("reverse_gradient", name))[0]
        else:
            pattern = OPS[name].flows(len(inputs))  # which inputs the table lets a gradient into
            if self.vjps and any(pattern):
                out = checked_vjp(self, name, raw, inputs, attrs)
            else:
                out = raw(*inputs, **attrs)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        outs = tuple(kit.copy(o) if any(o is i for i in inputs) else o for o in outs)
        if self.log is not None and not self.vjps:
            self.log.op(name, self.place, inputs, outs)
        if self.inspect:
            self.program.inspect_op(name, inputs, attrs, [id(t) in self.made for t in inputs], outs)
        self._record(inputs, outs, pattern, name)
        return outs[0] if len(outs) == 1 else outs

    def _admit(self, name, inputs, attrs) -> None:
        """Refuse an op whose result would pass the memory budget, before the framework runs it."""
        if self.memory is not None:
            self.memory.admit(name, [self.kit.shape(t) for t in inputs],
                              [self.kit.dtype_name(t) for t in inputs], attrs, count=True)

    def _override(self, name: str):
        key = op_key(name)
        for scope in reversed(self.scopes):
            entry = scope.get(key)
            if entry is not None:
                if self.count and not self.forwards:  # counted where its gradient runs
                    self.matched(entry)
                return entry.gradient
        return None

    def _rule(self, gradient: str, op_name: str, attrs: dict, n: int):
        """(which inputs get a gradient, backward(xs, outs, dys), user-written?) for a named
        gradient: a spec's `register:` one, or a built-in (gradcli/ops BUILTINS: expression
        text for the first input, evaluated the same way; lang/rules.py)."""
        spec = self.program.register.get(gradient.lower())
        if spec is not None:
            grads = spec.grads
        elif builtin(gradient) is not None:
            grads = (builtin(gradient),) + (None,) * (n - 1)
        else:
            raise GradientError(f"no gradient is registered under {gradient!r} (needed by op "
                                f"{op_name!r}); register it under 'register' or use one of "
                                f"{', '.join(BUILTINS)}")
        pattern = (([grads[0] is not None] * n) if len(grads) == 1
                   else [i < len(grads) and grads[i] is not None for i in range(n)])

        def backward(xs, outs, dys):
            got = self.rule_gradients(grads, self.interpreter.evaluate, attrs, xs, outs, dys)
            if len(got) == 1:
                if got[0] is None:
                    return [None] * n
                if n != 1:
                    raise GradientError(f"gradient {gradient!r} for op {op_name!r} returned one "
                                        f"gradient; the op has {n} inputs: return a list with "
                                        "one per input (None where an input gets none)")
            if len(got) != n:
                raise GradientError(f"gradient {gradient!r} for op {op_name!r} returned "
                                    f"{len(got)} gradients; the op has {n} inputs")
            return got

        return pattern, backward, spec is not None

    def _custom(self, inputs, forward, backward, pattern, label, strict: bool = False):
        """The kit's custom-gradient op; its backward's gradients are fitted to the inputs
        (exactly, or a scalar, when a user wrote the backward: strict)."""
        kit = self.kit
        if self.true_pass:  # built inside grad() (nothing else is custom on the true pass)
            backward = self._dual(forward, backward)

        def fitted(xs, outs, dys):
            dys = tuple(d if d is not None and self.is_float(o) else None for d, o in zip(dys, outs))
            grads = backward(xs, outs, dys)
            return [self._fit(g, x, i, label, strict) for i, (g, x) in enumerate(zip(grads, xs))]

        outs = tuple(kit.custom(list(inputs), forward, fitted))
        self._record(inputs, outs, pattern, label[1])
        if self.log is not None and not self.vjps:
            self.log.op(label[1], self.place, inputs, outs)
        return outs

    def _record(self, inputs, outs, pattern, op: str | None = None) -> None:
        if self.graph is not None:
            self.graph.add(inputs, outs, [self.kit.is_tensor(o) and self.is_float(o) for o in outs],
                           pattern, op)

    def _fit(self, g, x, i: int, label, strict: bool):
        """A rule's gradient brought to the input's shape and dtype, as the core's _fit does
        (the rule and its errors: core/shapes.py fitting)."""
        if g is None or not self.is_float(x):
            return None
        kit, (name, op) = self.kit, label
        if not kit.is_tensor(g):
            try:
                g = kit.constant(np.asarray(g, dtype=self._dt(x)))
            except (TypeError, ValueError):
                raise shapes.not_a_gradient(name, op, i, g) from None
        xd, xs = kit.dtype_name(x), kit.shape(x)
        cast, reshape = shapes.fitting(name, op, i, (kit.dtype_name(g), kit.shape(g)), (xd, xs), strict)
        if cast:
            g = kit.ops["cast"](g, dtype=xd)
        if reshape is None:
            return g
        return kit.broadcast_to(g, xs) if reshape == "broadcast" else sum_to(kit, g, xs)

    # ----- ops every kit shares -----
    def _random(self, name, shape, *args, **kwargs):
        # Drawn with numpy as the core draws them: the same numbers on every backend.
        spec = OPS[name]
        values = dict(spec.defaults)
        values.update(zip(spec.params[1:], args))
        values.update(kwargs)
        shape = shapes.as_shape(shape)
        self._admit(name, [], {"shape": shape, "dtype": self.dtype})
        seed = (self.program.experiment.seed, self.drawn)
        self.drawn += 1
        value = drawn(name, seed, shape, self.dtype, {p: values[p] for p in spec.params[1:]})
        return self.kit.constant(np.asarray(value))


def _first_copy(kit):
    return lambda x, **_: kit.copy(x)
