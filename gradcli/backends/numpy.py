"""The numpy backend: a spec built once on gradcli's bundled core, then replayed.

One more backend behind the Program flow (program.py) and the shared builder (builder.py);
its strategy is the core's nature: the forward is one symbolic graph, built once; each
gradient set (overridden, true, training's) is a gradient graph added to it when first
asked (gradient_set: a spec that needs only some builds only those), and every answer,
values, gradients, finite differences, curves, training steps and sweeps (rebind), replays
those graphs (gc.evaluate, gc.function) instead of building again.
"""
from __future__ import annotations

from contextlib import contextmanager

from .. import core as gc
from ..builtins import core_ops
from ..lang.interpret import Interpreter
from ..ops import op_key
from . import availability, core_grad
from .builder import SpecBuilder, gradient_of
from .program import Program, birth, check_grad_ys

NAME = "numpy"


def available() -> tuple[bool, str]:
    return availability(NAME)  # read in backends/__init__.py, without importing this module


class _Builder(SpecBuilder):
    """The core's hooks: an override is recorded on the op it builds (the registry's override
    scope), a function is the core's custom_gradient, grad() adds the gradient's ops to the
    one graph. Built once: nothing is built again."""

    def __init__(self, dtype: str) -> None:
        super().__init__(dtype)
        self.ops = core_ops(self.dtype)  # the table's ops as the core builds them
        self.scopes: list = []           # the override scopes open, innermost last
        self.in_forwards: set[int] = set()  # ids of ops claimed inside a function's forward

    def tensor(self, array):
        return gc.constant(array)

    def is_tensor(self, value) -> bool:
        return isinstance(value, gc.Tensor)

    def dtype_name(self, value) -> str:
        return str(value.dtype)

    def shape(self, value) -> tuple:
        return value.shape

    def to_numpy(self, value):
        return value.numpy()

    @contextmanager
    def override_scope(self, entries):
        scope = gc.gradient_override_map({e.op: e.gradient for e in entries}, warn_unused=False)
        self.scopes.append(scope)
        try:
            with scope:
                yield
        finally:
            self.scopes.pop()
        for entry in entries:  # the core noted each op it claimed, under the op type's key;
            # one inside a function's forward never runs its gradient: the function's replaces it
            claimed = scope.matches.get(op_key(entry.op), [])
            self.matched(entry, sum(id(op) not in self.in_forwards for op in claimed))

    def call_function(self, spec, args, evaluate):
        def forward(*xs):
            before = [(s, {k: len(ops) for k, ops in s.matches.items()}) for s in self.scopes]
            bound, result = self.function_forward(spec, xs, evaluate)
            for s, counts in before:
                self.in_forwards.update(id(op) for k, n in counts.items() for op in s.matches[k][n:])
            outs, single = self.outputs(result)
            return (outs[0] if single else outs), (
                lambda *dys: self.function_gradients(spec, bound, dys, evaluate))

        forward.__name__ = spec.name
        return gc.custom_gradient(forward)(*args)

    def pass_through(self, fn, x):
        return gc.grad_pass_through(fn)(x)

    def grad(self, y_at, x):
        # The core's graph is symbolic: y as already built is a function of x, no rebuild.
        return core_grad.gradient(y_at(), x)

    def origin(self, place):
        return gc.origin(place)


def _registered_rule(spec, interpreter: Interpreter):
    def rule(op, *dys):
        grads = SpecBuilder.rule_gradients(spec.grads, interpreter.evaluate, op.attrs, op.inputs,
                                           op.outputs, dys)
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
        # Gradient graphs are built when first asked (Program.gradient_set, the trainee's
        # training gradients): their random draws (a gradient expression may draw) continue
        # this stream, as if each were built right after the forward, in the order asked.
        self._draws = _stream()
        self.first_build(self.env, builder)

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

    @contextmanager
    def building_gradients(self):
        """Where a gradient graph of this spec is built: its registered gradients in the
        registry (they are looked up as the backward walk meets each op), its random draws
        from this program's own stream."""
        saved = _stream()
        _stream(self._draws)
        try:
            with self._registered_gradients():
                yield
        finally:
            _stream(saved)

    def build_gradients(self, kind: str):
        """The gradient graph of one set: 'overridden', 'true', or 'train' (the training
        loss's clipped gradients, which the trainee replays; kept across rebinds too)."""
        with self.building_gradients():
            if kind == "train":  # numpy_train (and the core's optimizers) only for a spec that trains
                from .numpy_train import train_gradients
                return train_gradients(self, self.env)
            return self._gradient_graph(kind)

    def _gradient_graph(self, kind: str) -> dict:
        exp, env = self.experiment, self.env
        check_grad_ys(exp, {out.name: env[out.name].shape for out in exp.outputs})
        differentiate = gc.gradients if kind == "overridden" else gc.true_gradients
        xs = [env[n] for n in exp.wrt]
        stops = [env[n] for n in exp.stop_gradients]
        table = {}
        for out in exp.outputs:
            gy = exp.grad_ys.get(out.name)
            with gradient_of(out.expr, f"the {kind} gradient of output {out.name!r}", exp):
                grads = differentiate([env[out.name]], xs, grad_ys=None if gy is None else [gy],
                                      stop_gradients=stops, unconnected_gradients=exp.unconnected)
            table[out.name] = dict(zip(exp.wrt, grads))
        return table

    def rebind(self, experiment) -> bool:
        # Inputs are the graph's variables (training moved them: every one is reset); the
        # seed, hyper-parameters and steps are read from self.experiment when used.
        for name, spec in experiment.inputs.items():
            self.leaves[name].assign(spec.value)
        self.experiment = self.interpreter.experiment = experiment
        self.numeric_kinds, self.numeric_seeds = {}, {}
        return True

    # ----- what the runner asks for -----
    def values(self) -> dict:
        tensors = [self.env[n] for n in self.value_names]
        return dict(zip(self.value_names, gc.evaluate(tensors))) if tensors else {}

    def read_gradients(self, table: dict) -> dict:
        flat = [(o, i, g) for o, row in table.items() for i, g in row.items() if g is not None]
        values = gc.evaluate([g for _, _, g in flat]) if flat else []
        result = {o: {i: None for i in row} for o, row in table.items()}
        for (o, i, _), value in zip(flat, values):
            result[o][i] = value
        return result

    def size_of(self, name: str) -> int:
        return self.env[name].size

    def numeric_row(self, out: str, grad_ys, kinds: dict, limits: tuple, seed: int) -> dict:
        # the core replays the forward per probe; it probes by the same rule (fd.probe_kind)
        exp, env = self.experiment, self.env
        max_probes, directions = limits
        grads = gc.numeric_gradients([env[out]], [env[n] for n in exp.wrt],
                                     grad_ys=None if grad_ys is None else [grad_ys],
                                     stop_gradients=[env[n] for n in exp.stop_gradients],
                                     unconnected_gradients="none", max_probes=max_probes,
                                     directions=directions, seed=seed)
        return dict(zip(exp.wrt, grads))

    def locate_nonfinite(self, phase: str, tensors: list) -> list:
        if phase == "forward":
            return _locate(self.experiment, phase, tensors, [self.env[n] for n in tensors])
        table = self.gradient_set(phase)
        return _locate(self.experiment, phase, [f"d{o}/d{i}" for o, i in tensors],
                       [table[o][i] for o, i in tensors])

    def trainee(self):
        from .numpy_train import NumpyTrainee
        return NumpyTrainee(self)

    def output_at(self, feed: dict, output: str):
        with self._fed(feed):
            return gc.evaluate([self.env[output]])[0]

    def gradient_at(self, kind: str, feed: dict, output: str, wrt: str):
        g = self.gradient_set(kind)[output][wrt]
        if g is None:
            return None
        with self._fed(feed):
            return gc.evaluate([g])[0]

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


def _stream(state=None):
    """The core's random stream (its seed and its count of draws made), or set it to state."""
    from ..core.ops_array import _Seeds  # noqa: PLC2701 - the one reader besides set_seed
    if state is None:
        return _Seeds.base, _Seeds.counter
    _Seeds.base, _Seeds.counter = state
    return state


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


def build(experiment) -> NumpyProgram:
    return NumpyProgram(experiment)
