"""What every backend's built experiment offers the runner, in plain numpy: the Program flow
(which gradient set is built when, the numeric loop and what it reports: kinds and seeds),
and the records a run returns."""
from __future__ import annotations

import numpy as np

from ..errors import SpecError
from ..fd import probe_kind
from ..record import Factory, record

SMALL = 64  # up to this many parameter elements, training records every step's values


@record
class Convention:
    """Where a framework's own convention differs from spec-v1 (and what gradcli reports)."""

    topic: str
    text: str
    output: str | None = None
    input: str | None = None
    # flat (row-major) indices of the input's elements the note is about; None: every element
    elements: tuple | None = None
    # what difference it documents (kit.NONFINITE, FINITE, UNCONNECTED): only "nonfinite" may
    # excuse a gap in compare; any other note is shown and excuses nothing
    kind: str = "finite"


@record
class Nonfinite:
    """Where a NaN or an infinity in one result was born (spec-v2 "Non-finite provenance")."""

    phase: str               # the pass: "forward", "overridden", "true" or "train"
    op: str | None           # the op type that turned finite inputs into a non-finite value
    expr: str | None         # its sub-expression in the spec (an input's name for an input)
    location: str | None     # "file:line:col" of that sub-expression
    tensor: str              # the result that is non-finite: a name, or dOUT/dINPUT
    value: str               # what the result holds: "nan", "inf" or "-inf"
    born: str                # what the op produced first
    step: int | None = None  # the training step, for phase "train"


def birth(experiment, phase: str, tensor: str, value: str, born: str, op_type: str | None,
          place, leaf: str | None = None, step: int | None = None) -> Nonfinite:
    """A Nonfinite from what a backend found: the op's type and its Place (or a leaf's name)."""
    if place is not None:
        return Nonfinite(phase, op_type, place.text, place.location, tensor, value, born, step)
    spec = experiment.inputs.get(leaf) if leaf else None
    if spec is not None:  # a non-finite input: born where the spec gives it
        return Nonfinite(phase, "input", leaf, str(spec.loc), tensor, value, born, step)
    return Nonfinite(phase, op_type, None, experiment.path, tensor, value, born, step)


def train_error(experiment, exc: Exception, key: str):
    """A training failure that no expression caused, pointing at the spec's train block."""
    spec = experiment.train
    return spec.keys.get(key, spec.loc).error(str(exc), key=key)


def check_grad_ys(experiment, shapes: dict) -> None:
    """Each grad_ys entry has its output's shape, or is a scalar broadcast to it (the initial
    gradient of tf.gradients, one per y).

    The one check of that rule: the runner applies it to every backend before it asks for
    gradients, and the numpy core before it builds a gradient set (a curve asks without the
    runner), so every backend refuses the same specs with the same words, whether or not a
    path reaches the output.
    """
    for out, given in experiment.grad_ys.items():
        shape = tuple(shapes[out])
        if np.ndim(given) and tuple(np.shape(given)) != shape:
            key = f"grad_ys.{out}"
            message = (f"grad_ys for output {out!r} has shape {tuple(np.shape(given))}; it must "
                       f"have the output's shape {shape} or be a scalar")
            place = experiment.places.get(key)
            raise SpecError(message, key=key) if place is None else place.error(message, key=key)


def optimizer_overflow(experiment, name: str, value: str, step: int) -> Nonfinite:
    """An update that went non-finite although the loss and gradients were finite."""
    spec = experiment.train
    return Nonfinite("train", spec.optimizer, f"optimizer {spec.optimizer}", str(spec.loc), name,
                     value, value, step)


def nonfinite_kind(value) -> str | None:
    """'nan', 'inf' or '-inf' for the first non-finite element; None when all are finite."""
    from ..core.nonfinite import kind  # the core's definition, imported when first needed
    return kind(value)


@record(frozen=False)
class TrainRecord:
    """Loss before each step, and (for small models) parameters and gradients per step."""

    loss: list
    params: dict
    gradients: list
    final: dict = Factory(dict)
    final_loss: float | None = None
    nonfinite: Nonfinite | None = None  # the first non-finite loss, update, constraint or metric
    steps: int = 0                      # optimizer steps done
    epochs: int | None = None           # epochs begun (with data), else None
    eval_steps: list = Factory(list)    # the step count at each metric evaluation
    metrics: dict = Factory(dict)       # {metric: {"train": [...], "test": [...]}} per evaluation
    final_metrics: dict = Factory(dict) # {metric: {"train": v, "test": v}} after the last step
    stopped: dict | None = None         # {"step", "reason", "nonfinite": {...}} or None


class Program:
    """A spec built on one backend, and the one flow of what the runner asks of it.

    The flow (which set is built when, the numeric loop and what it reports) is written here
    once; a backend supplies its strategy: build_gradients / read_gradients (the core builds a
    gradient graph once and replays it; an eager framework builds again and keeps the values),
    numeric_row, size_of.
    """

    def __init__(self, experiment) -> None:
        self.experiment = experiment
        self.override_matches: list = []             # [(OverrideEntry, ops it matched)]
        self.conventions: list[Convention] = []      # where the framework's own convention differs
        self.warnings: list[str] = []                # what the run should tell its reader
        self.numeric_kinds: dict = {}                # {output: {input: "full" | "directional"}},
                                                     # filled by numeric(): what it did
        self.numeric_seeds: dict = {}                # {output: {input: seed or None}}: the seed
                                                     # of a directional check's directions
        self.gradient_builds: dict = {}              # {kind: builds}: a set is built when asked
        self._gradient_sets: dict = {}               # kind -> what build_gradients gave

    def rebind(self, experiment) -> bool:
        """Replay this built graph for `experiment`, which differs from the one it was built
        for only in values (input values of the same shapes, seed, train hyper-parameters and
        steps: see sweep/replay.py): True when this backend can, and then it has taken them."""
        return False

    def first_build(self, env: dict, builder) -> None:
        """What the spec's first build tells on every backend: how many ops each override_map
        entry matched, which lets and outputs hold tensors (values() gives those), and that a
        non-scalar training loss is trained on its sum."""
        exp = self.experiment
        self.override_matches = builder.override_matches(exp.override_map)
        self.value_names = [n for n in env if n not in exp.inputs and builder.is_tensor(env[n])]
        loss = env.get(exp.train.loss) if exp.train is not None else None
        if loss is not None and builder.is_tensor(loss):
            note_loss_shape(self, builder.shape(loss))

    def values(self) -> dict:
        """Every let and output by name."""
        raise NotImplementedError

    def gradients(self, kind: str) -> dict:
        """{output: {input: array or None}} for kind 'overridden' or 'true'; the set is built
        the first time it is asked for (issue 14: a spec that needs only some is built only
        those), and read from that one build every time after."""
        return self.read_gradients(self.gradient_set(kind))

    def gradient_set(self, kind: str):
        """The backend's build of one gradient set, made when first needed."""
        built = self._gradient_sets.get(kind)
        if built is None:
            built = self._gradient_sets[kind] = self.build_gradients(kind)
            self.gradient_builds[kind] = self.gradient_builds.get(kind, 0) + 1
        return built

    def build_gradients(self, kind: str):
        """Strategy: one gradient set ('overridden' or 'true') built, in the backend's form."""
        raise NotImplementedError

    def read_gradients(self, built) -> dict:
        """Strategy: {output: {input: array or None}} from what build_gradients gave."""
        raise NotImplementedError

    def numeric(self, max_probes: int, directions: int) -> dict:
        """Finite-difference gradients, directional beyond max_probes elements (of the tensor
        probed, input or let); records which it did in numeric_kinds and the seed of each
        directional check's directions in numeric_seeds (the runner projects onto the same)."""
        exp, result = self.experiment, {}
        for out in exp.outputs:
            kinds = {n: probe_kind(self.size_of(n), max_probes) for n in exp.wrt}
            gy = exp.grad_ys.get(out.name)
            result[out.name] = self.numeric_row(out.name, gy, kinds, (max_probes, directions),
                                                exp.seed)
            self.numeric_kinds[out.name] = kinds
            self.numeric_seeds[out.name] = {n: exp.seed if k == "directional" else None
                                            for n, k in kinds.items()}
        return result

    def size_of(self, name: str) -> int:
        """Strategy: how many elements the tensor named (an input or a let) has."""
        raise NotImplementedError

    def numeric_row(self, out: str, grad_ys, kinds: dict, limits: tuple, seed: int) -> dict:
        """Strategy: {input: numeric gradient or None} of sum(grad_ys * out), each input probed
        as kinds says (limits: (max_probes, directions); directions drawn with `seed`)."""
        raise NotImplementedError

    def train(self, progress=lambda it, **kw: it) -> TrainRecord:
        """Training per the spec's train block: the one loop (gradcli.training) over this
        backend's Trainee."""
        from ..training.loop import train
        return train(self.trainee(), self.experiment, progress)

    def trainee(self):
        """This program as the training loop drives it (gradcli.training.loop.Trainee)."""
        raise NotImplementedError

    def output_at(self, feed: dict, output: str):
        """One output's value with the inputs in feed set to new values of the same shapes
        (a replay: the curve figure sweeps an input this way)."""
        raise NotImplementedError

    def gradients_at(self, feed: dict, output: str, wrt: str) -> tuple:
        """(overridden, true) gradient of output with respect to input wrt, replayed at feed."""
        return tuple(self.gradient_at(kind, feed, output, wrt) for kind in ("overridden", "true"))

    def gradient_at(self, kind: str, feed: dict, output: str, wrt: str):
        """Strategy: one gradient of one set at feed (a replay of the set's build, or a build
        from the fed inputs)."""
        raise NotImplementedError

    def locate_nonfinite(self, phase: str, tensors: list) -> list[Nonfinite]:
        """Where each non-finite result was born: phase "forward" takes value names,
        "overridden" and "true" take (output, input) pairs."""
        return []

    def expr_of(self, name: str):
        """The expression that defines a let or an output (for errors that point into the spec)."""
        exp = self.experiment
        for out in exp.outputs:
            if out.name == name:
                return out.expr
        return next((let.expr for let in exp.lets if name in let.names), exp.outputs[0].expr)


def note_loss_shape(program, shape: tuple) -> None:
    """A non-scalar loss is trained on its sum (as tf.train optimizers do): say so."""
    if tuple(shape) != ():
        name = program.experiment.train.loss
        program.warnings.append(f"train.loss {name!r} has shape {tuple(shape)}, not a scalar: "
                                "training minimizes (and reports) its sum, as tf.train "
                                "optimizers do with a non-scalar loss")


def loss_value(array) -> float:
    """The loss a step reports: the sum of a non-scalar loss (what its gradient is of)."""
    return float(np.sum(np.asarray(array)))


def small(arrays) -> bool:
    return sum(int(np.size(a.numpy() if hasattr(a, "numpy") else a)) for a in arrays) <= SMALL
