"""The numpy backend: a spec built once on gradcli's bundled core, then replayed."""
from __future__ import annotations

from contextlib import contextmanager, nullcontext

import numpy as np

from .. import core as gc
from ..errors import GradcliError, SpecError
from ..fd import probe_kind
from ..lang.interpret import Interpreter, spec_error
from ..opset import OPS
from . import core_grad
from .numpy_train import train_gradients
from .program import Program, birth, check_grad_ys, note_loss_shape

NAME = "numpy"


def available() -> tuple[bool, str]:
    return True, f"numpy {np.__version__} (bundled core)"


class _Builder:
    """gradcli's core as the interpreter's op table and gradient-control hooks."""

    def __init__(self, dtype: str) -> None:
        self.dtype = np.dtype(dtype)
        self.scopes: list[tuple[list, gc.gradient_override_map]] = []
        self.ops = {name: getattr(gc, name) for name in OPS if hasattr(gc, name)}
        self.ops.update(
            getitem=gc.getitem,
            cast=lambda x, dtype: gc.cast(x, dtype),
            uniform=lambda shape, low=0.0, high=1.0: gc.uniform(shape, low, high, dtype=self.dtype),
            normal=lambda shape, mean=0.0, std=1.0: gc.normal(shape, mean, std, dtype=self.dtype),
            bernoulli=lambda shape, p=0.5: gc.bernoulli(shape, p, dtype=self.dtype),
            one_hot=lambda indices, depth: gc.one_hot(indices, depth, dtype=self.dtype),
        )

    def constant(self, value):
        array = np.asarray(value)
        return gc.constant(array, dtype=self.dtype if array.dtype.kind in "iuf" else None)

    def is_tensor(self, value) -> bool:
        return isinstance(value, gc.Tensor)

    def is_float(self, value) -> bool:
        return value.dtype.kind == "f"

    def dtype_name(self, value) -> str:
        return str(value.dtype)

    def to_index(self, value):
        return np.asarray(value.numpy()).tolist()

    @contextmanager
    def override_scope(self, entries):
        scope = gc.gradient_override_map({e.op: e.gradient for e in entries}, warn_unused=False)
        self.scopes.append((entries, scope))
        with scope:
            yield

    def call_function(self, spec, args, evaluate):
        def forward(*xs):
            bound = dict(zip(spec.args, xs))
            for name, expr in spec.lets:  # the forward's intermediates, which grad_fn sees
                bound[name] = evaluate(expr, bound)

            def grad_fn(*dys):
                names = {"dy": dys[0], **{f"dy{i}": d for i, d in enumerate(dys)}}
                return [None if g is None else evaluate(g, {**bound, **names}) for g in spec.grads]

            return self._outputs(evaluate(spec.forward, bound)), grad_fn

        forward.__name__ = spec.name
        return gc.custom_gradient(forward)(*args)

    def _outputs(self, value):
        """A function's forward as tensors: a tuple from a multi-output op, else one tensor
        (a constant forward, such as `3.0` or `[1.0, 2.0]`, included)."""
        if isinstance(value, tuple):
            return tuple(v if self.is_tensor(v) else self.constant(v) for v in value)
        return value if self.is_tensor(value) else self.constant(value)

    def pass_through(self, fn, x):
        return gc.grad_pass_through(fn)(x)

    def grad(self, y_at, x):
        # The core's graph is symbolic: y as already built is a function of x, no rebuild.
        return core_grad.gradient(y_at(), x)

    def checkpoint(self):
        return None

    def rebuilding(self, mark):
        return nullcontext()

    def bind(self, names, value, env):
        return value

    def origin(self, place):
        return gc.origin(place)


def _registered_rule(spec, interpreter: Interpreter):
    def rule(op, *dys):
        names = {**op.attrs}
        names.update({f"x{i}": t for i, t in enumerate(op.inputs)},
                     x=op.inputs[0], y=op.outputs[0], dy=dys[0])
        names.update({f"y{i}": t for i, t in enumerate(op.outputs)})
        names.update({f"dy{i}": d for i, d in enumerate(dys)})
        grads = [None if g is None else interpreter.evaluate(g, names) for g in spec.grads]
        return grads[0] if len(grads) == 1 else grads
    return rule


class NumpyProgram(Program):
    """One experiment on the core: graph and gradient graph built once, replayed after."""

    def __init__(self, experiment) -> None:
        super().__init__(experiment)
        exp = experiment
        gc.set_seed(exp.seed)
        builder = _Builder(exp.dtype)
        self.interpreter = Interpreter(exp, builder)
        self.leaves = {name: gc.variable(spec.value, name=name, trainable=spec.trainable,
                                         dtype=spec.value.dtype)
                       for name, spec in exp.inputs.items()}
        with self._registered_gradients():
            self.env = self.interpreter.build(self.leaves)
            self.override_matches = _matches_per_entry(builder.scopes)
            check_grad_ys(exp, {out.name: self.env[out.name].shape for out in exp.outputs})
            self._grads = {kind: self._build_gradients(kind) for kind in ("overridden", "true")}
            # Training's gradients are graph nodes too: built now, while the spec's registered
            # gradients are in the registry (they leave it when the build is done).
            self._train_grads = (train_gradients(self, self.env) if exp.train is not None
                                 else None)
        if exp.train is not None:
            note_loss_shape(self, self.env[exp.train.loss].shape)
        self.value_names = [n for n in self.env if n not in exp.inputs
                            and isinstance(self.env[n], gc.Tensor)]

    @contextmanager
    def _registered_gradients(self):
        names = list(self.experiment.register)
        for name, spec in self.experiment.register.items():
            gc.register_gradient(name, replace=True)(_registered_rule(spec, self.interpreter))
        try:
            yield
        finally:
            for name in names:
                gc.unregister_gradient(name)

    def _build_gradients(self, kind: str) -> dict:
        exp, env = self.experiment, self.env
        differentiate = gc.gradients if kind == "overridden" else gc.true_gradients
        xs = [env[n] for n in exp.wrt]
        stops = [env[n] for n in exp.stop_gradients]
        table = {}
        for out in exp.outputs:
            gy = exp.grad_ys.get(out.name)
            try:
                grads = differentiate([env[out.name]], xs, grad_ys=None if gy is None else [gy],
                                      stop_gradients=stops, unconnected_gradients=exp.unconnected)
            except GradcliError as exc:
                if isinstance(exc, SpecError):
                    raise
                raise spec_error(out.expr, f"the {kind} gradient of output {out.name!r}: {exc}") from None
            table[out.name] = dict(zip(exp.wrt, grads))
        return table

    def rebind(self, experiment) -> bool:
        # Inputs are the graph's variables (training moved them: every one is reset); the
        # seed, hyper-parameters and steps are read from self.experiment when used.
        for name, spec in experiment.inputs.items():
            self.leaves[name].assign(spec.value)
        self.experiment = self.interpreter.experiment = experiment
        self.numeric_kinds = {}
        return True

    # ----- what the runner asks for -----
    def values(self) -> dict:
        tensors = [self.env[n] for n in self.value_names]
        return dict(zip(self.value_names, gc.evaluate(tensors))) if tensors else {}

    def gradients(self, kind: str) -> dict:
        table = self._grads[kind]
        flat = [(o, i, g) for o, row in table.items() for i, g in row.items() if g is not None]
        values = gc.evaluate([g for _, _, g in flat]) if flat else []
        result = {o: {i: None for i in row} for o, row in table.items()}
        for (o, i, _), value in zip(flat, values):
            result[o][i] = value
        return result

    def numeric(self, max_probes: int, directions: int) -> dict:
        exp, env = self.experiment, self.env
        xs = [env[n] for n in exp.wrt]
        stops = [env[n] for n in exp.stop_gradients]
        result = {}
        for out in exp.outputs:
            gy = exp.grad_ys.get(out.name)
            grads = gc.numeric_gradients([env[out.name]], xs, grad_ys=None if gy is None else [gy],
                                         stop_gradients=stops, unconnected_gradients="none",
                                         max_probes=max_probes, directions=directions,
                                         seed=exp.seed)
            result[out.name] = dict(zip(exp.wrt, grads))
            self.numeric_kinds[out.name] = {n: probe_kind(x.size, max_probes)
                                            for n, x in zip(exp.wrt, xs)}
        return result

    def locate_nonfinite(self, phase: str, tensors: list) -> list:
        if phase == "forward":
            return _locate(self.experiment, phase, tensors, [self.env[n] for n in tensors])
        table = self._grads[phase]
        return _locate(self.experiment, phase, [f"d{o}/d{i}" for o, i in tensors],
                       [table[o][i] for o, i in tensors])

    def trainee(self):
        from .numpy_train import NumpyTrainee
        return NumpyTrainee(self)

    def output_at(self, feed: dict, output: str):
        with self._fed(feed):
            return gc.evaluate([self.env[output]])[0]

    def gradients_at(self, feed: dict, output: str, wrt: str) -> tuple:
        grads = [self._grads[kind][output][wrt] for kind in ("overridden", "true")]
        with self._fed(feed):
            return tuple(None if g is None else gc.evaluate([g])[0] for g in grads)

    @contextmanager
    def _fed(self, feed: dict):
        """The built graph with some inputs assigned new values, restored afterwards."""
        saved = {name: self.leaves[name].numpy() for name in feed}
        try:
            for name, value in feed.items():
                self.leaves[name].assign(value)
            yield
        finally:
            for name, value in saved.items():
                self.leaves[name].assign(value)


def _first(found: list):
    return found[0] if found else None


def _locate(experiment, phase: str, labels: list, tensors: list, step=None) -> list:
    """Records of where each tensor's non-finite value was born, found by the core's checked walk."""
    found = []
    for label, hit in zip(labels, gc.find_nonfinite(tensors)):
        if hit is not None:
            leaf = hit.op.outputs[0].label if not hit.op.inputs else None
            found.append(birth(experiment, phase, label, hit.value, hit.born, hit.op.type,
                               hit.origin, leaf, step))
    return found


def _matches_per_entry(scopes) -> list:
    """(entry, ops matched) once per entry, summed over the scopes it was entered in."""
    counts: dict = {}
    for entries, scope in scopes:
        for entry in entries:
            counts[entry] = counts.get(entry, 0) + len(scope.matches.get(entry.op, []))
    return list(counts.items())


def build(experiment) -> NumpyProgram:
    return NumpyProgram(experiment)
