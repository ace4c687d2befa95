"""An experiment on an eager framework: every answer comes from building the forward again
(its strategy behind the Program flow of program.py; the numpy core's is a replay).

Values come from one build; each kind of gradient from one build under the
framework's vector-Jacobian product; numeric gradients from one build per
probe; training from one build per step. What the numpy core calls
"unconnected" is decided on the dataflow graph each build records (see
connectivity.Graph), so None, zeros and errors mean the same on every framework; where
the framework's own autodiff says otherwise, a Convention note says so.
"""
from __future__ import annotations

import numpy as np

from ..errors import GradientError
from ..fd import estimate
from ..lang.interpret import Interpreter, spec_error
from ..ops import FRAMEWORKS, OPS
from .builder import gradient_of
from .connectivity import STEPS
from .eager import EagerBuilder
from .edge_elements import is_elementwise, on_inputs, reach, receivers
from .kit import UNCONNECTED
from .program import Convention, Program

# A few ulps of a value are ~1e-7..1e-6 relative, but a later 1 - y magnifies them: TF's
# float32 sigmoid is 1 to 6 ulps off the correctly rounded value at ~20-40% of inputs (by tensor
# size), 3e-4 relative in y * (1 - y) for |x| <= 12 (tryout7: the note promised ~1e-6).
FLOAT32_NOTE = ("float32: {label} computes in float32 with its own kernels (vectorized sums, fused "
                "or reordered formulas), so results a few float32 ulps away from the numpy core "
                "are rounding, not disagreement (relative ~1e-6 for one op; more where a formula "
                "subtracts nearly equal numbers, as sigmoid's gradient y * (1 - y) at |x| > 5)")


# {framework: the ops its own autodiff gives None through}, from the op table's no_gradient_in
NO_GRADIENT = {fw: frozenset(n for n, spec in OPS.items() if fw in spec.no_gradient_in)
               for fw in FRAMEWORKS}


def zero_derivative_text(path_ops, framework: str) -> str:
    """Why the framework gave None on a connected path from an input to an output: the ops the
    path is cut at (a comparison, an op the table gives no gradient) and those the framework
    registers no gradient for (NO_GRADIENT); else the steps (STEPS) on it, all with a zero
    derivative."""
    ops = path_ops or ()
    names = list(dict.fromkeys(op for op, cut in ops if cut or op in NO_GRADIENT.get(framework, ())))
    names = names or list(dict.fromkeys(op for op, _ in ops if op in STEPS))
    if not names:
        return "an op on the path has a zero derivative"
    shown = [f"{n} ({OPS[n].operator})" if n in OPS and OPS[n].operator else n for n in names]
    listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
    return f"the path goes through {listed}, with a zero derivative"


class EagerProgram(Program):
    """One experiment on one eager framework Kit."""

    def __init__(self, experiment, kit) -> None:
        super().__init__(experiment)
        exp = experiment
        self.kit = kit
        self.dtype = np.dtype(exp.dtype)
        self.register = {name.lower(): spec for name, spec in exp.register.items()}
        self.conventions: list[Convention] = []
        self._kept: list = []
        # (op, EdgeNote, {input id: the note's elements there}, ids of its results) and the
        # result ids of elementwise ops, from the inspecting build
        self._edges: list = []
        self._elementwise: set = set()
        self._zero_paths: dict = {}  # {(output, input): path_ops} where the framework gave None
        self.leaves = {name: kit.constant(np.array(spec.value)) for name, spec in exp.inputs.items()}
        env, graph, builder = self.run("overridden", self.leaves, record=True, inspect=True,
                                       count=True)
        self.aliases = dict(builder.aliases)
        self._env, self._graph = env, graph
        self._base = {n: np.asarray(kit.numpy(v)) for n, v in env.items() if kit.is_tensor(v)}
        self._kept.clear()  # literal constants, held only while the inspecting build ran
        self._note_edges(env, graph)
        if exp.dtype == "float32":
            self.note(Convention("float32", FLOAT32_NOTE.format(label=kit.label)))
        for topic, text in kit.static_conventions(exp):
            self.note(Convention(topic, text))
        self.first_build(env, builder)

    # ----- building -----
    def run(self, mode: str, leaves: dict, **options):
        """Build every let and output once: (env, recorded graph or None, builder)."""
        builder = EagerBuilder(self, mode, **options)
        interpreter = Interpreter(self.experiment, builder)
        builder.interpreter = interpreter
        env = interpreter.build(dict(leaves))
        graph = builder.graph
        builder.finish()
        return env, graph, builder

    def note(self, convention: Convention) -> None:
        if convention not in self.conventions:
            self.conventions.append(convention)

    def inspect_op(self, name: str, inputs: list, attrs: dict, literal: list, outs=()) -> None:
        """Note where the framework's own op would differ here (ties, bounds, pow's exponent),
        and at which elements of the inputs whose gradient the note is about."""
        elementwise = is_elementwise(OPS[name])
        if elementwise:
            self._elementwise.add(tuple(id(o) for o in outs))
        check = self.kit.checks.get(name)
        if check is not None:
            arrays = [np.asarray(self.kit.numpy(t)) for t in inputs]
            for edge in check(arrays, literal):
                at: dict = {}
                masks = on_inputs(edge.where, [a.shape for a in arrays], elementwise)
                for k, (t, m) in enumerate(zip(inputs, masks)):
                    if edge.inputs is not None and k not in edge.inputs:
                        continue  # another input's gradient: the same number in every framework
                    at[id(t)] = at[id(t)] | m if id(t) in at else m  # maximum(x, x): both
                self._edges.append((name, edge, at, [id(t) for t in outs]))

    def _note_edges(self, env, graph) -> None:
        """Each edge note on the output/input pairs whose gradient goes through its op's own
        backward and reaches some element of the input from the inputs the note is about (so
        that compare counts it as the reason for a difference there, at those elements), or on
        the run when none does. An op whose backward is never run (under stop_gradient, inside
        a function or override whose own gradient replaces it) places its note on no pair."""
        exp, pairs = self.experiment, []
        for out in exp.outputs:
            for name in exp.wrt:
                x = env.get(self.canonical(name))
                if self.kit.is_tensor(env[out.name]) and self.kit.is_tensor(x):
                    pairs.append((out.name, name, id(env[out.name]), id(x)))
        shapes = {id(t): tuple(self.kit.shape(t)) for node in graph.keep for part in node
                  for t in part if self.kit.is_tensor(t)} if self._edges else {}
        receiving = {y: receivers(graph, y) for _, _, y, _ in pairs} if self._edges else {}
        for op, edge, inputs, results in self._edges:
            placed = False
            for o, n, y, x in pairs:
                # through the op's own backward: y's gradient reaches one of its results (along
                # ops that pass a gradient), and from its inputs the difference reaches x
                if not any(r in receiving[y] for r in results):
                    continue
                elements = _elements(reach(graph, inputs, x, shapes.get, self._elementwise))
                if elements is not None and not elements:
                    continue  # no element of x: the note is not about this pair
                self.note(Convention(op, edge.text, o, n, elements, edge.kind))
                placed = True
            if not placed:
                self.note(Convention(op, edge.text, kind=edge.kind))
        self._edges.clear()
        self._elementwise.clear()

    def keep(self, tensor) -> None:
        self._kept.append(tensor)

    def canonical(self, name: str) -> str:
        return self.aliases.get(name, name)

    def is_float(self, name: str) -> bool:
        value = self._base.get(name)
        return value is not None and value.dtype.kind == "f"

    # ----- what the runner asks for -----
    def values(self) -> dict:
        return {n: _plain(self._base[n]) for n in self.value_names}

    def build_gradients(self, kind: str) -> dict:
        """One build under the framework's vjp; its values are the set (an eager framework
        keeps no graph to replay)."""
        exp = self.experiment
        rows = self.differentiate(kind, [o.name for o in exp.outputs], exp.wrt,
                                  exp.stop_gradients, self.leaves, exp.grad_ys)
        return {out: {name: self._finish(kind, out, name, g, connected)
                      for name, (g, connected) in row.items()}
                for out, (_, row) in rows.items()}

    def read_gradients(self, table: dict) -> dict:
        return {out: dict(row) for out, row in table.items()}

    def differentiate(self, kind: str, outputs, wrt, stops, leaves: dict, grad_ys: dict,
                      log=None) -> dict:
        """{output: (value, {name: (framework gradient or None, connected)})} from one build."""
        exp, kit = self.experiment, self.kit
        roots = list(dict.fromkeys(self.canonical(n) for n in wrt))
        names = [n for n in roots if self.is_float(n)]
        sources = [leaves[n] if n in exp.inputs
                   else kit.constant(np.full(self._base[n].shape, -0.0, self._base[n].dtype))
                   for n in names]
        stops = {self.canonical(n) for n in stops}
        state: dict = {}

        def forward(srcs):
            srcs = list(srcs)
            built_leaves, probes = dict(leaves), {}
            for n, s in zip(names, srcs):
                (built_leaves if n in exp.inputs else probes)[n] = s
            env, graph, _ = self.run(kind, built_leaves, probes=probes, stops=stops, record=True,
                                     log=log, vjps=log is not None)
            ys = [self._output(env, o) for o in outputs]
            state.update(graph=graph, srcs=srcs, ys=ys)
            return [y for y in ys if y is not None]

        if names:
            outs, backward = kit.differentiate(forward, sources)
        else:
            outs, backward = forward([]), None
        # Read once: a kit's backward may build the forward again (jax: one vjp per output).
        graph, src_ids = state["graph"], {id(s): n for n, s in zip(names, state["srcs"])}
        table, k = {}, 0
        for out, y in zip(outputs, list(state["ys"])):
            native, carried, value = {}, set(), None
            if y is not None:
                value, k = outs[k], k + 1
                carried = {src_ids[i] for i in graph.carried(set(src_ids), id(y))}
                if kind == "true":  # through comparisons and casts: connected, derivative 0
                    carried |= {n for i, n in src_ids.items() if graph.depends(id(y), i, set())}
                if backward is not None:
                    with gradient_of(self.expr_of(out), f"the {kind} gradient of output {out!r}",
                                     self.experiment):
                        native = dict(zip(names, backward(k - 1, self._seed(out, value, grad_ys))))
            ids = {n: i for i, n in src_ids.items()}
            for n in wrt:  # connected, yet the framework says None: the note names the ops
                c = self.canonical(n)
                if y is not None and c in carried and native.get(c) is None:
                    self._zero_paths[(out, n)] = graph.path_ops(id(y), ids[c])
            table[out] = (value, {n: (native.get(self.canonical(n)), self.canonical(n) in carried)
                                  for n in wrt})
        return table

    def _output(self, env, name):
        value = env[name]
        if not self.kit.is_tensor(value):
            return None
        return value if self.kit.dtype_name(value).startswith("float") else None

    def _seed(self, out: str, value, grad_ys: dict):
        shape, dtype = self.kit.shape(value), self.kit.dtype_name(value)
        given = grad_ys.get(out) if grad_ys else None
        if given is None:
            return self.kit.constant(np.ones(shape, dtype))
        given = np.asarray(given, dtype=dtype)
        if given.shape != shape:
            if given.ndim:
                raise GradientError(f"grad_ys for {out} has shape {given.shape}; it must match the "
                                    f"output's shape {shape} or be a scalar")
            given = np.broadcast_to(given, shape)
        return self.kit.constant(np.array(given))

    def _finish(self, kind: str, out: str, name: str, g, connected: bool):
        base = self._base[self.canonical(name)]
        label, mode = self.kit.label, self.experiment.unconnected
        if connected:
            if g is None:
                why = zero_derivative_text(self._zero_paths.get((out, name)), self.kit.name)
                self.note(Convention("unconnected", f"{kind} d{out}/d{name}: {label}'s own autodiff "
                                     f"gives None (no gradient): {why}, "
                                     "which spec-v1 and the numpy core count as connected: "
                                     "gradcli reports zeros", out, name, kind=UNCONNECTED))
                return _plain(np.zeros(base.shape, base.dtype))
            return _plain(np.asarray(self.kit.numpy(g)).astype(base.dtype))
        if g is not None:
            size = float(np.max(np.abs(self.kit.numpy(g)))) if np.size(self.kit.numpy(g)) else 0.0
            what = ("zeros" if size == 0 else f"a gradient with max |g| = {size:.3g}")
            self.note(Convention("unconnected", f"{kind} d{out}/d{name}: {label} returns {what} "
                                 f"({self.kit.unconnected_text}), but no path carries a gradient "
                                 f"from {out} to {name}: gradcli reports what unconnected: {mode} "
                                 "says", out, name, kind=UNCONNECTED))
        if mode == "zero":
            return _plain(np.zeros(base.shape, base.dtype))
        if mode == "error":
            raise spec_error(self.expr_of(out), f"the {kind} gradient of output {out!r}: {name} is not "
                                   "connected to the outputs: no path carries a gradient to it "
                                   "(unconnected_gradients='error')")
        return None

    def size_of(self, name: str) -> int:
        x = self.canonical(name)
        return self._base[x].size if x in self._base else 0

    def numeric_row(self, out: str, grad_ys, kinds: dict, limits: tuple, seed: int) -> dict:
        # one build per probe (the framework keeps no graph to replay)
        exp, kit = self.experiment, self.kit
        stops = [self.canonical(n) for n in exp.stop_gradients]
        weights = 1.0 if grad_ys is None else np.asarray(grad_ys, dtype=np.float64)
        y, row = self._env[out], {}
        for name in exp.wrt:
            x = self.canonical(name)
            held = [s for s in stops if s != x and s in self._env]
            if (not self.is_float(x) or not kit.is_tensor(y)
                    or not self._graph.depends(id(y), id(self._env[x]),
                                               {id(self._env[s]) for s in held})):
                row[name] = None
                continue
            objective = self._objective(out, x, held, weights)
            base = self._base[x].astype(np.float64)
            grad = estimate(objective, base, self._base[x].dtype, kinds[name], limits[1], seed)
            row[name] = _plain(grad.astype(self._base[x].dtype))
        return row

    def _objective(self, out: str, x: str, held: list, weights):
        exp, kit, dtype = self.experiment, self.kit, self._base[x].dtype
        feeds = {s: self._base[s] for s in held if s not in exp.inputs}

        def objective(value) -> list:  # the weighted elements (gradcli.fd.difference)
            value = np.asarray(value, dtype=dtype)
            leaves = dict(self.leaves)
            if x in exp.inputs:
                leaves[x] = kit.constant(value)
                run_feeds = feeds
            else:
                run_feeds = {**feeds, x: value}
            env, _, _ = self.run("true", leaves, feeds=run_feeds)
            return [weights * np.asarray(kit.numpy(env[out]), dtype=np.float64)]

        return objective

    def output_at(self, feed: dict, output: str):
        env, _, _ = self.run("true", self._fed(feed))
        return _plain(np.asarray(self.kit.numpy(env[output])))

    def gradient_at(self, kind: str, feed: dict, output: str, wrt: str):
        exp = self.experiment
        rows = self.differentiate(kind, [output], [wrt], exp.stop_gradients, self._fed(feed),
                                  exp.grad_ys)
        return self._finish(kind, output, wrt, *rows[output][1][wrt])

    def _fed(self, feed: dict) -> dict:
        """The leaves with some inputs replaced (an eager framework builds again from them)."""
        return {**self.leaves, **{name: self.kit.constant(np.asarray(value, self._base[name].dtype))
                                  for name, value in feed.items()}}

    def locate_nonfinite(self, phase: str, tensors, leaves: dict | None = None,
                         step: int | None = None) -> list:
        """As Program.locate_nonfinite, at these leaves (default the spec's own); tensors may
        also be {label: Expr} of extra expressions (a training metric or constraint)."""
        from .eager_nonfinite import locate
        return locate(self, phase, tensors, leaves or self.leaves, step)

    def trainee(self):
        from .eager_train import EagerTrainee
        return EagerTrainee(self)

    def evaluate_exprs(self, exprs: dict, leaves: dict, log=None) -> dict:
        """{name: value} of extra expressions (metrics, constraints) over one build of the spec
        from these leaves (log: a BirthLog that checks every op, see eager_nonfinite)."""
        builder = EagerBuilder(self, "true", log=log)
        interpreter = Interpreter(self.experiment, builder)
        builder.interpreter = interpreter
        env = interpreter.build(dict(leaves))
        return {name: interpreter.evaluate(expr, env) for name, expr in exprs.items()}


def _elements(mask) -> tuple | None:
    """A note's elements as flat indices into the input; None for every element, () for none
    (the difference does not reach the input: the note is about none of it, never all of it)."""
    if mask is None:
        return ()
    if mask.all():
        return None
    return tuple(int(i) for i in np.flatnonzero(mask))


def _plain(array: np.ndarray):
    """numpy values as the numpy backend gives them: 0-d arrays become numpy scalars."""
    array = np.asarray(array)
    return array[()] if array.ndim == 0 else array
