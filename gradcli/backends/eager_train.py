"""Training on an eager backend: the framework's gradients, TensorFlow 1's clipping and updates,
as a Trainee of the one training loop (gradcli.training.loop).

The gradients come from the framework (overridden, as training uses them);
clipping and the optimizer steps are TensorFlow's formulas (the optimizers'
are gradcli.core.tf_updates, shared with the numpy core) applied with the
framework's own ops, so every backend trains to TensorFlow's numbers. Where
the framework's own optimizer or clipping would differ, the program gets a
Convention note with the size of the difference.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..core.tf_updates import rule_for
from ..errors import GradientError, GraphError
from ..ops.table import mixed_dtypes
from .program import Convention, loss_value, nonfinite_kind, optimizer_overflow, train_error


class EagerTrainee:
    """An EagerProgram as the training loop drives it: the forward is built again per step (as
    an eager framework does), from the current batch and the current variable values."""

    def __init__(self, program) -> None:
        exp, kit = program.experiment, program.kit
        self.program, self.kit, self.spec = program, kit, exp.train
        self.names = [n for n, s in exp.inputs.items() if s.trainable and s.value.dtype.kind == "f"]
        self.params = {n: program.leaves[n] for n in self.names}
        self.leaves = dict(program.leaves)
        self.updates = Updates(kit, self.spec.optimizer, self.spec.hyper)
        self.first = True

    def feed(self, batch) -> None:
        if batch is not None:
            for name, value in batch.items():
                self.leaves[name] = self.kit.constant(np.asarray(value))

    def done(self) -> None:
        """Nothing to restore: the program's own leaves were never changed (a copy was fed)."""

    def _all(self, params=None) -> dict:
        return {**self.leaves, **(self.params if params is None else params)}

    def loss_and_gradients(self) -> tuple:
        kit = self.kit
        loss, grads = _loss_and_gradients(self.program, self.params, self.names, self._all())
        live = [n for n in self.names if grads[n] is not None]
        if not live:
            raise GradientError("no gradients provided for any variable: every gradient is None "
                                "(is the loss connected to the variables?)")
        try:
            clipped = clip(kit, [grads[n] for n in live], self.spec.clip)
        except GraphError as exc:  # placed at the key, as the numpy core places it
            raise train_error(self.program.experiment, exc, "train.clip") from None
        if self.first:
            self.first = False
            for note in native_differences(kit, self.spec, clipped, [grads[n] for n in live]):
                self.program.note(note)
        return loss, (live, clipped)

    def gradient_values(self, grads) -> dict:
        live, clipped = grads
        return {n: _numpy(self.kit, g) for n, g in zip(live, clipped)}

    def apply(self, grads, lr: float) -> None:
        live, clipped = grads
        self.updates.rule.set_lr(lr)
        self.params.update(self.updates.apply(live, clipped, self.params))

    def snapshot(self):
        return dict(self.params)

    def nonfinite(self, step: int, loss: float, before):
        live = self.names if before is not None else []
        return _first_nonfinite(self.program, step, loss, before or self.params, self.params,
                                live, self.leaves)

    def locate(self, kind: str, name: str, label: str, step: int):
        found = self.program.locate_nonfinite("train", {label: getattr(self.spec, kind)[name]},
                                              self._all(), step)
        return found[0] if found else None

    def read(self) -> dict:
        return {n: _numpy(self.kit, self.params[n]) for n in self.names}

    def assign(self, values: dict) -> None:
        for name, value in values.items():
            dtype = self.program.experiment.inputs[name].value.dtype
            self.params[name] = self.kit.constant(np.asarray(value, dtype=dtype))

    def loss(self) -> float:
        env, _, _ = self.program.run("true", self._all())
        return loss_value(self.kit.numpy(env[self.spec.loss]))

    def evaluate(self, kind: str) -> dict:
        values = self.program.evaluate_exprs(getattr(self.spec, kind), self._all())
        return {n: _numpy(self.kit, v) if self.kit.is_tensor(v) else np.asarray(v)
                for n, v in values.items()}


def _loss_and_gradients(program, params: dict, names: list, leaves: dict) -> tuple[float, dict]:
    kit, loss = program.kit, program.experiment.train.loss
    rows = program.differentiate("overridden", [loss], names, (), leaves, {})
    value, row = rows[loss]
    if value is None:
        raise GradientError(f"the training loss {loss!r} is not a float tensor")
    grads = {}
    for n, (g, connected) in row.items():
        if not connected:
            grads[n] = None
        else:
            grads[n] = g if g is not None else kit.ops["zeros_like"](params[n])
    return loss_value(kit.numpy(value)), grads


def _first_nonfinite(program, step: int, loss: float, before: dict, after: dict, live: list,
                     fed: dict):
    """Where step's non-finite loss or update was born, located at the step's starting values
    (`fed`: the leaves with the step's batch)."""
    exp, kit = program.experiment, program.kit
    bad = [n for n in live if nonfinite_kind(_numpy(kit, after[n]))]
    if np.isfinite(loss) and not bad:
        return None
    leaves, name = {**fed, **before}, exp.train.loss
    if not np.isfinite(loss):
        found = program.locate_nonfinite("train", [name], leaves, step)
    else:
        found = program.locate_nonfinite("train", [(name, n) for n in live], leaves, step)
    if found:
        return found[0]
    return optimizer_overflow(exp, bad[0], nonfinite_kind(_numpy(kit, after[bad[0]])), step)


def _numpy(kit, t):
    array = np.asarray(kit.numpy(t))
    return array[()] if array.ndim == 0 else array


def _const(kit, value, like):
    return kit.constant(np.asarray(value, dtype=kit.dtype_name(like)))


# ----- clipping: TensorFlow's formulas op for op (tf.clip_by_norm, tf.clip_by_global_norm) -----
def clip(kit, grads: list, spec) -> list:
    if spec is None:
        return grads
    if spec.kind == "norm":
        native = getattr(kit, "clip_by_norm", None)
        return [native(g, spec.value) if native else clip_by_norm(kit, g, spec.value) for g in grads]
    if spec.kind == "global_norm":
        # tf.clip_by_global_norm stacks the tensors' norms: TensorFlow refuses two dtypes there,
        # where torch and jax would promote the float32 gradient (and so the float32 variable)
        dtypes = list(dict.fromkeys(kit.dtype_name(g) for g in grads))
        if len(dtypes) > 1:
            raise GraphError("%s; %s" % mixed_dtypes("stack", dtypes))
        native = getattr(kit, "clip_by_global_norm", None)
        return native(grads, spec.value) if native else clip_by_global_norm(kit, grads, spec.value)
    lo, hi = spec.value
    return [kit.ops["clip"](g, _const(kit, lo, g), _const(kit, hi, g)) for g in grads]


def clip_by_norm(kit, t, clip_norm):
    """t * clip_norm / max(l2norm(t), clip_norm), with TensorFlow's two-tap where at zero and its
    clamp of a negative clip_norm to 0."""
    ops = kit.ops
    c = _const(kit, 0 if clip_norm <= 0 else clip_norm, t)
    l2sum = ops["sum"](ops["mul"](t, t), axis=None, keepdims=True)
    pred = ops["greater"](l2sum, _const(kit, 0, t))
    l2sum_safe = ops["where"](pred, l2sum, ops["ones_like"](l2sum))
    l2norm = ops["where"](pred, ops["sqrt"](l2sum_safe), l2sum)
    return ops["div"](ops["mul"](t, c), ops["maximum"](l2norm, c))


def clip_by_global_norm(kit, grads: list, clip_norm) -> list:
    """Each t * clip_norm / max(global_norm, clip_norm); NaN everywhere unless the norm is finite."""
    ops, like = kit.ops, grads[0]
    half = [ops["mul"](ops["sum"](ops["mul"](t, t), axis=None, keepdims=False), _const(kit, 0.5, t))
            for t in grads]
    norm = ops["sqrt"](ops["mul"](ops["sum"](ops["stack"](*half, axis=0), axis=None, keepdims=False),
                                  _const(kit, 2.0, like)))
    c, one = _const(kit, clip_norm, like), _const(kit, 1.0, like)
    scale = ops["mul"](c, ops["minimum"](ops["div"](one, norm), ops["div"](one, c)))
    scale = ops["add"](scale, ops["sub"](norm, norm))
    return [ops["mul"](t, scale) for t in grads]


# ----- optimizers: tf.compat.v1.train update rules (gradcli.core.tf_updates) -----
class Updates:
    """sgd, momentum and adam as tf.train applies them, on the framework's tensors."""

    def __init__(self, kit, name: str, hyper: dict) -> None:
        self.kit, self.rule = kit, rule_for(name, hyper)
        # a kit whose sqrt is not correctly rounded gives one that is: TF's kernels' sqrt is
        sqrt = getattr(kit, "exact_sqrt", None) or kit.ops["sqrt"]
        self.ops = SimpleNamespace(sqrt=sqrt, zeros_like=kit.ops["zeros_like"])
        self.slots: dict[str, dict] = {}

    def apply(self, names: list, grads: list, params: dict) -> dict:
        kit, rule, ops = self.kit, self.rule, self.ops
        updated = {n: rule.update(params[n], g, self.slots.setdefault(n, {}),
                                  kit.dtype_name(params[n]), ops)
                   for n, g in zip(names, grads)}
        rule.finish_step()
        return updated


# ----- where the framework's own tools would train differently -----
def native_differences(kit, spec, clipped: list, raw: list) -> list[Convention]:
    """Notes, with numbers from the first step, for the framework's own clipping and Adam."""
    notes = []
    grads = [np.asarray(kit.numpy(g), dtype=np.float64) for g in raw]
    ours = [np.asarray(kit.numpy(g), dtype=np.float64) for g in clipped]
    eps = getattr(kit, "norm_clip_epsilon", None)
    if eps and spec.clip is not None and spec.clip.kind in ("norm", "global_norm"):
        c = float(spec.clip.value)
        with np.errstate(all="ignore"):  # an infinite gradient makes both NaN: not worth a warning
            if spec.clip.kind == "norm":
                theirs = [g * min(1.0, c / (np.sqrt(np.sum(g * g)) + eps)) for g in grads]
            else:
                total = np.sqrt(sum(np.sum(g * g) for g in grads))
                theirs = [g * min(1.0, c / (total + eps)) for g in grads]
            gap = max(float(np.max(np.abs(a - b))) if a.size else 0.0 for a, b in zip(ours, theirs))
        notes.append(Convention("clipping", f"{kit.native_clip} divides by (norm + {eps:g}); gradcli "
                                "clips with TensorFlow's t * clip_norm / max(norm, clip_norm) in "
                                f"{kit.label} ops: on step 1 the clipped gradients would differ by "
                                f"max |diff| = {gap:.3g}"))
    native_adam = getattr(kit, "native_adam", None)
    if spec.optimizer == "adam" and native_adam:
        h = spec.hyper
        lr, b1, b2 = float(h["lr"]), float(h.get("beta1", 0.9)), float(h.get("beta2", 0.999))
        eps = float(h.get("epsilon", 1e-8))
        tf_step = [lr * np.sqrt(1 - b2) / (1 - b1) * ((1 - b1) * g) / (np.sqrt((1 - b2) * g * g) + eps)
                   for g in ours]
        their_step = [lr * g / (np.abs(g) + eps) for g in ours]
        gap = max(float(np.max(np.abs(a - b))) if a.size else 0.0 for a, b in zip(tf_step, their_step))
        notes.append(Convention("adam", f"{native_adam} adds epsilon to sqrt(v_hat) after bias "
                                "correction; TensorFlow 1's AdamOptimizer (and gradcli) adds it to "
                                "sqrt(v) and folds the bias correction into the step size: on step 1 "
                                f"the updates would differ by max |diff| = {gap:.3g}"))
    return notes
