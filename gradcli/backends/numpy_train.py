"""The numpy core as a Trainee of the one training loop (gradcli.training.loop).

The spec's graph is built once per distinct number of data rows, never per step: the
core's kernels close over the shapes they were built for (sum_to and broadcast_to undo
broadcasting to a fixed shape, reshape and random draws keep theirs), so a batch of
another size needs a graph of its own. A run has at most four: the full batch, the
last shorter batch, the whole training part (final loss, metrics) and the test part.
Each batch is fed by assigning the data variables of its graph (no copy), and every
graph shares the trainable variables, so an update is seen by all of them.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import core as gc
from ..core.evaluate import collector_paused
from ..core.graph import assign_all
from ..core.tf_updates import rule_for
from ..errors import GradcliError, GradientError, SpecError
from ..lang.interpret import spec_error
from .numpy_constraints import clip_plan, direct_ops, flat_bounds
from .numpy_flat import FlatUpdate
from .program import loss_value, nonfinite_kind, optimizer_overflow, train_error

_FLOATS = (np.float32, np.float64)


class _Graph:
    """One build of the spec for one number of data rows: its names, its data variables, and
    (built when first asked) the training gradients and the metric and constraint nodes."""

    __slots__ = ("env", "data", "grads", "nodes", "fns", "step", "flat_fits", "direct",
                 "clip_plan")

    def __init__(self, env: dict, data: dict) -> None:
        self.env, self.data = env, data
        self.grads = None          # [(name, clipped gradient tensor)] of the connected variables
        self.nodes: dict = {}      # "metrics" | "constraints" -> {name: tensor}
        self.fns: dict = {}        # what -> compiled replay (gc.function)
        self.step = None           # (names with a gradient, compiled replay of loss and them)
        # decided on the graph's first step: its replay gives gradients of the same type,
        # dtype and shape every step, and a variable's dtype and shape never change
        self.flat_fits = None      # whether they are updated at once (FlatUpdate.fits)
        self.direct: dict = {}     # "metrics" | "constraints" -> direct_ops(its nodes)
        self.clip_plan = None      # clip_plan of the constraints ([]: none clips in place)


class NumpyTrainee:
    """A NumpyProgram's graphs and variables, as the training loop drives them."""

    def __init__(self, program) -> None:
        self.program = program
        exp = self.experiment = program.experiment
        self.spec = exp.train
        self.variables = {n: t for n, t in program.leaves.items() if getattr(t, "trainable", False)}
        self.names = list(self.variables)
        data = exp.data
        self.data_names = () if data is None else (data.features, data.labels)
        base = _Graph(program.env, {n: program.leaves[n] for n in self.data_names})
        base.grads = program.gradient_set("train")  # built when training is first asked, kept
        self.graphs = {_shapes(base.data): base}
        self.graph = base
        self.rule = rule_for(self.spec.optimizer, self.spec.hyper)
        self.slots = {n: {} for n in self.names}
        self._flats: dict = {}  # tuple of names -> FlatUpdate
        # the FlatUpdate whose views the slots dicts hold; the dicts are replaced for a fresh
        # start, and a per-variable step or another set of names writes into them
        self._laid_out = None
        self._finite = False  # apply()'s verdict on the updated variables, for nonfinite()
        self._loss_expr = program.expr_of(self.spec.loss)
        self._others: dict = {}  # names updated at once -> the other variables (_all_finite)
        # the variables' values that the last flat update made: new arrays nobody else holds,
        # which a clip(W, lo, hi) constraint may therefore clip in place
        self._fresh: dict = {}
        self._fresh_flat = None  # ... and the FlatUpdate whose `new` array they are views of

    # ----- feeding -----
    def feed(self, batch) -> None:
        if batch is None:
            return
        key = tuple([v.shape for v in batch.values()])  # what _shapes gives, for arrays
        graph = self.graphs.get(key)
        if graph is None:
            graph = self.graphs[key] = self._build(batch)
        for name, value in batch.items():
            graph.data[name].assign(value)  # same dtype: no copy, the batch itself
        self.graph = graph

    def done(self) -> None:
        base = next(iter(self.graphs.values()))
        for name, var in base.data.items():
            var.assign(self.experiment.inputs[name].value)
        self.graph = base

    def _build(self, batch: dict) -> _Graph:
        """The spec built again for this shape of the data names (see the module docstring)."""
        program, exp = self.program, self.experiment
        data = {n: gc.variable(v, name=n, trainable=False, dtype=exp.inputs[n].value.dtype)
                for n, v in batch.items()}
        gc.set_seed(exp.seed)  # the spec's own random draws come out as in the first build
        with collector_paused(), program._registered_gradients():
            env = program.interpreter.build({**program.leaves, **data})
        return _Graph(env, data)

    def _grads(self) -> list:
        graph = self.graph
        if graph.grads is None:
            with self.program._registered_gradients():
                graph.grads = train_gradients(self.program, graph.env)
        return graph.grads

    def _fn(self, what: str, fetches):
        fn = self.graph.fns.get(what)
        if fn is None:
            fn = self.graph.fns[what] = gc.function(fetches())
        return fn

    def _replay(self, what: str, fetches, expr) -> list:
        """The compiled replay's values; a kernel that refuses this batch's data (a label out
        of range) is the spec's error at `expr`, as it would have been on the first batch."""
        fn = self._fn(what, fetches)
        try:
            return fn()
        except (ValueError, IndexError) as exc:
            raise spec_error(expr, f"on data fed during training: {exc}") from None

    # ----- a step -----
    def loss_and_gradients(self) -> tuple:
        """(loss, grads); grads is (names, values) of the variables with a gradient."""
        with np.errstate(all="ignore"):
            loss, grads = self._replay_step()
        return _loss_number(loss), grads

    def _replay_step(self) -> tuple:
        """(the loss as replayed, grads), in the caller's errstate(all="ignore")."""
        graph = self.graph
        step = graph.step
        if step is None:
            step = graph.step = self._step()
        names, fn = step
        try:
            # the schedule's results uncopied (gc.function copies any that a constant or a
            # variable holds, every call): the loss is read as a float, the gradients are only
            # read (concatenated or passed to the rule), and gradient_values copies its records
            values = fn.schedule.run_ignoring(())
        except (ValueError, IndexError) as exc:
            raise spec_error(self._loss_expr, f"on data fed during training: {exc}") from None
        return values[0], (names, values[1:])

    def fused_step(self, batch, rate_at, step: int, constrain: bool) -> tuple:
        """The loop's step in one call and one errstate, in the loop's order: feed, loss and
        gradients, then, when the loss is a finite number, the update (at the learning rate
        rate_at(step), asked only then) and its verdict, then, when that is finite and
        `constrain`, the constraints if they clip in place (known once the loop has evaluated
        them on this graph: their nodes are built there, outside this errstate).
        (loss, grads, left, before): left is "" when all of that was done, "update" when only
        the feed and replay were (the loop goes on from the loss as usual), "verdict" when
        the update was applied and the loop must still ask nonfinite() (with `before`, the
        variables' values before the update) and apply the constraints."""
        self.feed(batch)
        with np.errstate(all="ignore"):  # the replay's, and a NaN or inf step is TF's number
            loss, grads = self._replay_step()
            if isinstance(loss, np.generic):  # 0-d: float() is loss_value's number, no warning
                loss = float(loss)
                if math.isfinite(loss):
                    old = self._update(grads, rate_at(step))
                    # the variables of the flat update hold its fresh values: clip them at once
                    flat, plan = self._fresh_flat, self.graph.clip_plan
                    if self._finite and (not constrain or plan and flat is not None
                                         and self._clip_flat(flat, plan)):
                        self._finite = False  # read: the verdict was this step's
                        return loss, grads, "", None
                    before = self.snapshot()
                    before.update(zip(grads[0], old))
                    return loss, grads, "verdict", before
        return _loss_number(loss), grads, "update", None

    def _step(self) -> tuple:
        """This graph's (names with a gradient, compiled replay of the loss and them)."""
        live = [(n, g) for n, g in self._grads() if g is not None]
        if not live:
            raise GradientError("no gradients provided for any variable: every gradient is None "
                                "(is the loss connected to the variables?)")
        loss_node = self.graph.env[self.spec.loss]
        return tuple(n for n, _ in live), gc.function([loss_node, *[g for _, g in live]])

    def gradient_values(self, grads) -> dict:
        return {n: np.array(g) if isinstance(g, np.ndarray) else g for n, g in zip(*grads)}

    def apply(self, grads, lr: float) -> None:
        with np.errstate(all="ignore"):  # a NaN or inf step is TF's number, not a warning
            self._update(grads, lr)

    def _update(self, grads, lr: float) -> list:
        """apply(), in the caller's errstate; the updated variables' values from before it
        (intact: the update writes new arrays, see FlatUpdate.step)."""
        rule = self.rule
        rule.set_lr(lr)
        names, grad_values = grads
        variables, slots = self.variables, self.slots
        values = [variables[n]._value for n in names]
        flat = self._flat(names, values, grad_values)
        if flat is not None:
            news = flat.step(rule, values, grad_values)
            assign_all(map(variables.__getitem__, names), news)
            self._fresh, self._fresh_flat = dict(zip(names, news)), flat
        else:
            self._fresh, self._fresh_flat = {}, None
            self._laid_out = None  # the rule may add slots to the dicts: lay out again
            for name, value, grad in zip(names, values, grad_values):
                variables[name].assign(
                    rule.update_numpy(value, grad, slots[name], variables[name].dtype))
        rule.finish_step()
        # here, where overflow warnings are already off
        self._finite = self._all_finite(() if flat is None else names,
                                        None if flat is None else flat.new)
        return values

    def _flat(self, names: tuple, values: list, grads):
        """The flat buffers for updating these variables at once (None: one at a time)."""
        graph = self.graph
        fits = graph.flat_fits
        if fits is None:
            fits = graph.flat_fits = FlatUpdate.fits(values, grads)
        if not fits:
            return None
        flat = self._flats.get(names)
        if flat is None:  # a variable's shape never changes (assign refuses another)
            flat = self._flats[names] = FlatUpdate(names, values)
        slots = [self.slots[n] for n in names]
        if self._laid_out is flat and all(map(operator.is_, slots, flat.slot_dicts)):
            return flat  # the dicts still hold this layout's views
        if flat.adopt(slots):
            self._laid_out = flat
            return flat
        self._laid_out = None
        return None

    def snapshot(self):
        return {n: v._value for n, v in self.variables.items()}

    def read(self) -> dict:
        return {n: v.numpy() for n, v in self.variables.items()}

    def assign(self, values: dict) -> None:
        for name, value in values.items():
            self.variables[name].assign(value)

    def loss(self) -> float:
        node = self.graph.env[self.spec.loss]
        return loss_value(self._replay("loss", lambda: [node], self._loss_expr)[0])

    def evaluate(self, kind: str) -> dict:
        exprs = getattr(self.spec, kind)
        nodes, direct = self._nodes(kind), self._direct(kind)
        if direct:  # every node is one op over leaves (clip(W, -1, 1)): its kernel, no replay
            if kind == "constraints" and self._clip_in_place(self._clip_plan()):
                return {n: self.variables[n]._value for n, _, _ in direct}
            try:
                with np.errstate(all="ignore"):
                    return {n: kernel(*[t._value for t in leaves]) for n, kernel, leaves in direct}
            except (ValueError, IndexError) as exc:
                raise spec_error(next(iter(exprs.values())),
                                 f"on data fed during training: {exc}") from None
        values = self._replay(kind, lambda: list(nodes.values()), next(iter(exprs.values())))
        return dict(zip(nodes, values))

    def _nodes(self, kind: str) -> dict:
        """{name: tensor} of the spec's "metrics" or "constraints" in the current graph."""
        graph = self.graph
        nodes = graph.nodes.get(kind)
        if nodes is None:
            interpreter = self.program.interpreter
            nodes = graph.nodes[kind] = {n: _node(interpreter.evaluate(e, graph.env), e)
                                         for n, e in getattr(self.spec, kind).items()}
        return nodes

    def _direct(self, kind: str) -> list:
        direct = self.graph.direct.get(kind)
        if direct is None:
            direct = self.graph.direct[kind] = direct_ops(self._nodes(kind))
        return direct

    def _clip_plan(self) -> list:
        plan = self.graph.clip_plan
        if plan is None:
            plan = self.graph.clip_plan = clip_plan(self._direct("constraints"), self.variables)
        return plan

    def _clip_in_place(self, plan: list) -> bool:
        """Clip each constrained variable in place when every constraint is clip(W, lo, hi) of
        its own variable, with constant bounds (the graph's clip_plan), on a value the last
        flat update just made: the same ufuncs as the kernel, on the same dtype, so the same
        bits without an allocation. Other constraints never read a clipped variable (their
        bounds are constants). False: evaluate them as usual."""
        fresh = self._fresh
        if not plan or any(self.variables[n]._value is not fresh.get(n) for n, _, _ in plan):
            return False
        if not self._clip_flat(self._fresh_flat, plan):
            for name, lo, hi in plan:
                value = fresh[name]
                np.minimum(value, hi, out=value)  # kernels.clip's order: min, then max
                np.maximum(value, lo, out=value)
            self._fresh, self._fresh_flat = {}, None
        return True

    def _clip_flat(self, flat, plan: list) -> bool:
        """_clip_in_place as one min/max pair over all of a flat update's new values, which
        the variables hold (checked by the caller); False when the plan does not fit it."""
        # per graph (its plan's bounds are its own constants), kept on the FlatUpdate
        bounds = flat.clip_bounds.get(self.graph, False)
        if bounds is False:
            bounds = flat.clip_bounds[self.graph] = flat_bounds(flat, plan)
        if bounds is None:
            return False
        new, (lo, hi) = flat.new, bounds
        np.minimum(new, hi, out=new)
        np.maximum(new, lo, out=new)
        self._fresh, self._fresh_flat = {}, None  # until the next flat update: any other value
        return True                                # is not ours to change

    # ----- where a non-finite step was born -----
    def nonfinite(self, step: int, loss: float, before):
        """Located at the step's starting values (the variables are put back meanwhile)."""
        finite, self._finite = self._finite, False  # the check apply() just made
        if before is not None and finite and math.isfinite(loss):
            return None
        exp = self.experiment
        from .numpy import _first, _locate
        bad = [n for n in self.names if before is not None
               and nonfinite_kind(self.variables[n]._value)]
        if np.isfinite(loss) and not bad:
            return None
        after = self.snapshot()
        if before is not None:
            self.assign(before)
        try:
            if not np.isfinite(loss):
                return _first(_locate(exp, "train", [self.spec.loss],
                                      [self.graph.env[self.spec.loss]], step))
            live = [(n, g) for n, g in self._grads() if g is not None]
            found = _first(_locate(exp, "train", [f"d{self.spec.loss}/d{n}" for n, _ in live],
                                   [g for _, g in live], step))
            value = nonfinite_kind(after[bad[0]])
            return found or optimizer_overflow(exp, bad[0], value, step)
        finally:
            self.assign(after)

    def locate(self, kind: str, name: str, label: str, step: int):
        """A metric's or constraint's non-finite value, walked in the current graph."""
        from .numpy import _first, _locate
        return _first(_locate(self.experiment, "train", [label], [self._nodes(kind)[name]],
                              step))

    def _all_finite(self, done=(), flat=None) -> bool:
        """Whether every variable is finite, by one reduction each (`done` ones: one for all,
        on their `flat` new values): a NaN or inf element makes its sum non-finite. A sum
        that overflows although every element is finite only sends the step to nonfinite()'s
        exact per-element check, which then finds nothing."""
        reduce = np.add.reduce
        if flat is not None:
            total = reduce(flat, axis=None)
            # math.isfinite on a float32/64 sum: the same verdict as np.isfinite, a call cheaper
            if not (math.isfinite(total) if type(total) in _FLOATS else np.isfinite(total)):
                return False
        others = self._others.get(done)
        if others is None:
            others = self._others[done] = [v for n, v in self.variables.items() if n not in done]
        for var in others:
            value = var._value
            if value.dtype.kind in "fc" and not np.isfinite(reduce(value, axis=None)):
                return False
        return True


def _loss_number(loss) -> float:
    """The loss a step reports: a 0-d loss (a numpy scalar) is its own sum, and float() gives
    loss_value's number for it."""
    return float(loss) if isinstance(loss, np.generic) else loss_value(loss)


def _shapes(values: dict) -> tuple:
    """What a graph is built for: the shapes of the data names' values, in order."""
    return tuple(np.shape(v) for v in values.values())


def _node(value, expr):
    """A metric's or constraint's value as a graph tensor (a literal becomes a constant)."""
    return value if isinstance(value, gc.Tensor) else gc.constant(np.asarray(value))


def train_gradients(program, env: dict) -> list:
    """[(name, clipped gradient tensor or None)] of the training loss in one build."""
    spec = program.experiment.train
    variables = {n: t for n, t in program.leaves.items() if getattr(t, "trainable", False)}
    try:
        grads = gc.gradients([env[spec.loss]], list(variables.values()))
    except GradcliError as exc:
        if isinstance(exc, SpecError):
            raise
        raise spec_error(program.expr_of(spec.loss), f"the gradient of the training loss "
                                                      f"{spec.loss!r}: {exc}") from None
    try:
        return list(zip(variables, _clipped(grads, spec.clip)))
    except GradcliError as exc:
        raise train_error(program.experiment, exc, "train.clip") from None


def _clipped(grads: list, clip):
    if clip is None:
        return grads
    if clip.kind == "norm":
        return [None if g is None else gc.clip_by_norm(g, clip.value) for g in grads]
    if clip.kind == "global_norm":
        return gc.clip_by_global_norm(grads, clip.value)[0]
    lo, hi = clip.value
    return [None if g is None else gc.clip_by_value(g, lo, hi) for g in grads]
