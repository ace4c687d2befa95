"""Optimizers in the style of tf.train: compute_gradients, apply_gradients, minimize.

Gradients are graph tensors (so they can be clipped or altered first);
apply_gradients evaluates them together in one replay and updates the
variables in numpy with TensorFlow 1's update rules (tf_updates: hyper-parameters
rounded through float32, Adam's beta powers kept in float32, as tf.train does).
A learning rate may be a callable of the step number (0 for the first update), e.g. a
schedule: each update then uses its value at that step, rounded through float32 as tf.train
rounds a float32 learning-rate tensor fed with it.
"""
from __future__ import annotations

import numpy as np

from ..errors import GradientError
from .autodiff import gradients
from .evaluate import compile_schedule
from .graph import Tensor, Variable, walk_ops
from .tf_updates import AdamRule, MomentumRule, RMSPropRule, SGDRule


def trainable_variables(loss: Tensor) -> list[Variable]:
    """The trainable variables loss depends on, in order of creation."""
    found = {t.uid: t for op in walk_ops([loss]) for t in op.outputs
             if isinstance(t, Variable) and t.trainable}
    return [found[k] for k in sorted(found)]


class Optimizer:
    """Base: subclasses pick the tf_updates rule that updates each variable."""

    def __init__(self, learning_rate, rule):
        self._schedule = learning_rate if callable(learning_rate) else None
        self.learning_rate = learning_rate if callable(learning_rate) else float(learning_rate)
        self._rule = rule
        self.iterations = 0
        self._slots: dict[int, dict[str, np.ndarray]] = {}
        self._train_graphs: dict[tuple, list[tuple]] = {}  # minimize's gradients, built once

    def compute_gradients(self, loss: Tensor, var_list=None, grad_loss=None) -> list[tuple]:
        """[(gradient tensor or None, variable), ...] for var_list (default: loss's trainables)."""
        var_list = trainable_variables(loss) if var_list is None else list(var_list)
        for v in var_list:
            if not isinstance(v, Variable):
                raise GradientError(f"compute_gradients() var_list holds {v!r}, which is not a "
                                    "variable; make it with gc.variable")
        grads = gradients([loss], var_list, grad_ys=None if grad_loss is None else [grad_loss])
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars) -> None:
        """One update step for every variable whose gradient is not None, applied now (returns None)."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise GradientError("no gradients provided for any variable: every gradient is None "
                                "(is the loss connected to the variables?)")
        values = compile_schedule([g for g, _ in pairs]).run()
        self.apply_values([v for _, v in pairs], values)

    def apply_values(self, variables, grads) -> None:
        """One update step from gradient values (numpy arrays), one per variable."""
        if self._schedule is not None:
            self._rule.set_lr(float(self._schedule(self.iterations)))
        self.iterations += 1
        with np.errstate(all="ignore"):  # a NaN or inf step is TF's number, not a warning
            for grad, var in zip(grads, variables):
                slots = self._slots.setdefault(var.uid, {})
                var.assign(self._rule.update(var._value, grad, slots, var.dtype, np))
            self._rule.finish_step()

    def minimize(self, loss: Tensor, var_list=None) -> None:
        """compute_gradients then apply_gradients: one training step, applied now (returns None).

        The gradient graph is built on the first call and replayed on later ones.
        """
        var_list = None if var_list is None else list(var_list)
        key = (loss.uid, None if var_list is None else tuple(v.uid for v in var_list))
        pairs = self._train_graphs.get(key)
        if pairs is None:
            pairs = self._train_graphs[key] = self.compute_gradients(loss, var_list)
        self.apply_gradients(pairs)


class GradientDescentOptimizer(Optimizer):
    """var -= grad * lr, with lr rounded through float32 as tf.train does (0.1 acts as
    0.10000000149011612 on a float64 variable)."""

    def __init__(self, learning_rate):
        super().__init__(learning_rate, SGDRule(_first(learning_rate)))


class MomentumOptimizer(Optimizer):
    """accum = accum * momentum + grad; var -= accum * lr (Nesterov: grad * lr + accum * momentum * lr).

    lr and momentum are rounded through float32, as tf.train does.
    """

    def __init__(self, learning_rate, momentum: float = 0.9, use_nesterov: bool = False):
        super().__init__(learning_rate, MomentumRule(_first(learning_rate), momentum, use_nesterov))
        self.momentum, self.use_nesterov = float(momentum), bool(use_nesterov)


class AdamOptimizer(Optimizer):
    """tf.train.AdamOptimizer: bias correction folded into the step size, epsilon outside sqrt.

    lr, beta1, beta2 and epsilon are rounded through float32 and beta1**t, beta2**t are
    float32 accumulators, as tf.train does.
    """

    def __init__(self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8):
        super().__init__(learning_rate, AdamRule(_first(learning_rate), beta1, beta2, epsilon))
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)


class RMSPropOptimizer(Optimizer):
    """tf.compat.v1.train.RMSPropOptimizer (not centered): the mean square starts at ones;
    ms += (g * g - ms) * (1 - decay); mom = mom * momentum + lr * g / sqrt(ms + epsilon);
    var -= mom. Hyper-parameters are rounded through float32, as tf.train does.
    """

    def __init__(self, learning_rate, decay: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-10):
        super().__init__(learning_rate, RMSPropRule(_first(learning_rate), decay, momentum,
                                                    epsilon))
        self.decay, self.momentum, self.epsilon = float(decay), float(momentum), float(epsilon)


def _first(learning_rate) -> float:
    """The learning rate of step 0 (a callable's value there), checked when the rule is made."""
    return float(learning_rate(0)) if callable(learning_rate) else learning_rate
