"""tf.compat.v1.train's update rules, written once for numpy arrays and framework tensors alike.

TensorFlow 1's optimizers turn a Python-float hyper-parameter into a float32 tensor
(ops.convert_to_tensor) and cast it to the variable's dtype when they apply it, so
learning_rate=0.1 updates a float64 variable with float64(float32(0.1)) =
0.10000000149011612. Adam also keeps beta1**t and beta2**t as float32 variables,
multiplied by the float32 betas after every step and cast to the variable's dtype when
used. The formulas are the CPU kernels' (ApplyGradientDescent, ApplyMomentum, ApplyAdam,
ApplyRMSProp),
op for op in the kernels' order, so float64 and float32 variables get TensorFlow's bits.

A rule's `update(value, grad, slots, dtype, ops)` works on whatever supports + - * / with
Python floats: `ops` gives `sqrt` and `zeros_like` for those arrays, `dtype` is the variable's
numpy dtype or its name. Every scalar a rule hands to the arrays is a Python float that the
variable's dtype holds exactly, so numpy, torch, jax and TensorFlow multiply by the same number.

On the numpy core, `update_numpy(value, grad, slots, dtype)` does the same arithmetic in place:
the slots are updated in their own buffers and the temporaries live in two scratch buffers per
variable, so a step allocates only the variable's new value (a new array, so the value the loop
kept from before the step stays intact). Every op is the formula's, in the formula's order (+ and
* are commutative in IEEE arithmetic, so `ms += t` is `ms + t`), hence the same bits.
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphError


def tf_hyper(value: float, name: str) -> float:
    """A Python-float hyper-parameter as tf.train applies it: rounded through float32."""
    with np.errstate(over="ignore"):
        rounded = np.float32(value)
    if np.isinf(rounded) and not np.isinf(value):
        raise GraphError(f"{name}={value:g} is beyond float32's range (max "
                         f"{np.finfo(np.float32).max:.7g}): tf.train turns Python-float "
                         "hyper-parameters into float32 tensors")
    return float(rounded)


class Rule:
    """What every rule shares: the learning rate of the current step."""

    lr: float
    _lr_from = None  # the learning rate self.lr was rounded from (a constant one: every step)

    def set_lr(self, learning_rate: float) -> None:
        """This step's learning rate (a schedule's), rounded through float32 as tf.train
        rounds a Python float or a float32 placeholder fed with it."""
        if learning_rate != self._lr_from:
            self.lr = tf_hyper(learning_rate, "learning_rate")
            self._lr_from = learning_rate

    def update_numpy(self, value, grad, slots: dict, dtype, out=None):
        """update() on numpy arrays; rules that can do it in place override this. `out`: where
        the in-place path may write the new values (an array like value, not value itself);
        a caller checks whether the result is it (update() ignores it)."""
        return self.update(value, grad, slots, dtype, np)


class SGDRule(Rule):
    """ApplyGradientDescent: var -= grad * lr."""

    def __init__(self, learning_rate: float) -> None:
        self.lr = tf_hyper(learning_rate, "learning_rate")

    def update(self, value, grad, slots: dict, dtype, ops):
        return value - grad * self.lr

    def update_numpy(self, value, grad, slots: dict, dtype, out=None):
        if not _in_place(value, grad):
            return self.update(value, grad, slots, dtype, np)
        t = _scratch(slots, "_t", value)
        np.multiply(grad, self.lr, out=t)
        return np.subtract(value, t, out=out)

    def finish_step(self) -> None:
        """Nothing to advance once every variable is updated."""


class MomentumRule(Rule):
    """ApplyMomentum: accum = accum * momentum + grad; var -= accum * lr
    (Nesterov: var -= grad * lr + accum * momentum * lr)."""

    def __init__(self, learning_rate: float, momentum: float, use_nesterov: bool) -> None:
        self.lr, self.momentum = tf_hyper(learning_rate, "learning_rate"), tf_hyper(momentum, "momentum")
        self.use_nesterov = bool(use_nesterov)

    def update(self, value, grad, slots: dict, dtype, ops):
        accum = slots.get("accum")
        accum = (ops.zeros_like(value) if accum is None else accum) * self.momentum + grad
        slots["accum"] = accum
        if self.use_nesterov:
            return value - (grad * self.lr + accum * self.momentum * self.lr)
        return value - accum * self.lr

    def update_numpy(self, value, grad, slots: dict, dtype, out=None):
        if not _in_place(value, grad):
            return self.update(value, grad, slots, dtype, np)
        accum = slots.get("accum")
        if accum is None:
            accum = slots["accum"] = np.zeros_like(value)
        np.multiply(accum, self.momentum, out=accum)
        np.add(accum, grad, out=accum)
        t = _scratch(slots, "_t", value)
        if self.use_nesterov:
            u = _scratch(slots, "_u", value)
            np.multiply(grad, self.lr, out=t)
            np.multiply(accum, self.momentum, out=u)
            np.multiply(u, self.lr, out=u)
            np.add(t, u, out=t)
            return np.subtract(value, t, out=out)
        np.multiply(accum, self.lr, out=t)
        return np.subtract(value, t, out=out)

    def finish_step(self) -> None:
        """Nothing to advance once every variable is updated."""


class AdamRule(Rule):
    """ApplyAdam: lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
    m += (g - m) * (1 - beta1); v += (g * g - v) * (1 - beta2); var -= m * lr_t / (sqrt(v) + epsilon)
    (epsilon on the uncorrected sqrt(v), as TensorFlow 1 has it)."""

    def __init__(self, learning_rate: float, beta1: float, beta2: float, epsilon: float) -> None:
        self.lr, self.epsilon = tf_hyper(learning_rate, "learning_rate"), tf_hyper(epsilon, "epsilon")
        self.beta1, self.beta2 = tf_hyper(beta1, "beta1"), tf_hyper(beta2, "beta2")
        # AdamOptimizer's beta1_power / beta2_power: float32 variables, whatever the var dtype
        self.beta1_power, self.beta2_power = np.float32(beta1), np.float32(beta2)
        self._scalars: dict = {}  # dtype -> this step's (lr_t, 1 - beta1, 1 - beta2)

    def set_lr(self, learning_rate: float) -> None:
        super().set_lr(learning_rate)
        self._scalars.clear()  # lr_t is computed from it

    def update(self, value, grad, slots: dict, dtype, ops):
        lr_t, c1, c2 = self._scalars.get(dtype) or self._scalars.setdefault(
            dtype, self._step_scalars(dtype))
        m, v = slots.get("m"), slots.get("v")
        m = ops.zeros_like(value) if m is None else m
        v = ops.zeros_like(value) if v is None else v
        m = m + (grad - m) * c1
        v = v + (grad * grad - v) * c2
        slots["m"], slots["v"] = m, v
        return value - (m * lr_t) / (ops.sqrt(v) + self.epsilon)

    def update_numpy(self, value, grad, slots: dict, dtype, out=None):
        if not _in_place(value, grad):
            return self.update(value, grad, slots, dtype, np)
        lr_t, c1, c2 = self._scalars.get(dtype) or self._scalars.setdefault(
            dtype, self._step_scalars(dtype))
        m, v = slots.get("m"), slots.get("v")
        if m is None:
            m = slots["m"] = np.zeros_like(value)
        if v is None:
            v = slots["v"] = np.zeros_like(value)
        t, u = _scratch(slots, "_t", value), _scratch(slots, "_u", value)
        np.subtract(grad, m, out=t)
        np.multiply(t, c1, out=t)
        np.add(m, t, out=m)
        np.multiply(grad, grad, out=t)
        np.subtract(t, v, out=t)
        np.multiply(t, c2, out=t)
        np.add(v, t, out=v)
        np.multiply(m, lr_t, out=t)
        np.sqrt(v, out=u)
        np.add(u, self.epsilon, out=u)
        np.divide(t, u, out=t)
        return np.subtract(value, t, out=out)

    def finish_step(self) -> None:
        """AdamOptimizer._finish: the float32 powers times the float32 betas."""
        self.beta1_power = self.beta1_power * np.float32(self.beta1)
        self.beta2_power = self.beta2_power * np.float32(self.beta2)
        self._scalars.clear()

    def _step_scalars(self, dtype) -> tuple[float, float, float]:
        """lr_t, 1 - beta1 and 1 - beta2 computed in dtype's precision, as the kernel does."""
        kind = np.dtype(dtype).type
        one, b1p, b2p = kind(1), kind(self.beta1_power), kind(self.beta2_power)
        with np.errstate(all="ignore"):  # beta1 = 0.99999999 is 1 in float32: lr_t is inf, as in TF
            lr_t = kind(self.lr) * np.sqrt(one - b2p) / (one - b1p)
        return float(lr_t), float(one - kind(self.beta1)), float(one - kind(self.beta2))


class RMSPropRule(Rule):
    """ApplyRMSProp (tf.compat.v1.train.RMSPropOptimizer, not centered): the mean square starts
    at ONES; ms += (g * g - ms) * (1 - decay); mom = mom * momentum + lr * g / sqrt(ms + epsilon);
    var -= mom (the kernel's order, checked bit for bit against TensorFlow)."""

    def __init__(self, learning_rate: float, decay: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-10) -> None:
        self.lr, self.epsilon = tf_hyper(learning_rate, "learning_rate"), tf_hyper(epsilon, "epsilon")
        self.decay, self.momentum = tf_hyper(decay, "decay"), tf_hyper(momentum, "momentum")
        self._one_minus_decay: dict = {}  # dtype -> 1 - decay in its precision

    def update(self, value, grad, slots: dict, dtype, ops):
        kind = np.dtype(dtype).type
        ms, mom = slots.get("rms"), slots.get("momentum")
        ms = ops.zeros_like(value) + 1.0 if ms is None else ms
        mom = ops.zeros_like(value) if mom is None else mom
        ms = ms + (grad * grad - ms) * float(kind(1) - kind(self.decay))
        mom = mom * self.momentum + grad * self.lr / ops.sqrt(ms + self.epsilon)
        slots["rms"], slots["momentum"] = ms, mom
        return value - mom

    def update_numpy(self, value, grad, slots: dict, dtype, out=None):
        if not _in_place(value, grad):
            return self.update(value, grad, slots, dtype, np)
        ms, mom = slots.get("rms"), slots.get("momentum")
        if ms is None:
            ms = slots["rms"] = np.ones_like(value)  # zeros_like(value) + 1.0, exactly
        if mom is None:
            mom = slots["momentum"] = np.zeros_like(value)
        t, u = _scratch(slots, "_t", value), _scratch(slots, "_u", value)
        decay = self._one_minus_decay.get(dtype)
        if decay is None:
            kind = np.dtype(dtype).type
            decay = self._one_minus_decay[dtype] = float(kind(1) - kind(self.decay))
        np.multiply(grad, grad, out=t)
        np.subtract(t, ms, out=t)
        np.multiply(t, decay, out=t)
        np.add(ms, t, out=ms)
        np.add(ms, self.epsilon, out=t)
        np.sqrt(t, out=t)
        np.multiply(grad, self.lr, out=u)
        np.divide(u, t, out=u)
        # mom * 0 + u even when momentum is 0: a NaN or inf momentum stays NaN, and a -0.0
        # becomes +0.0 where the old momentum was not negative, as in the kernel
        np.multiply(mom, self.momentum, out=mom)
        np.add(mom, u, out=mom)
        return np.subtract(value, mom, out=out)

    def finish_step(self) -> None:
        """Nothing to advance once every variable is updated."""


def _in_place(value, grad) -> bool:
    """Whether the in-place arithmetic gives update()'s bits: arrays of one dtype and shape
    (a 0-d value, a Python number or a gradient of another dtype takes update())."""
    return (type(value) is np.ndarray and type(grad) is np.ndarray and value.ndim > 0
            and grad.dtype == value.dtype and grad.shape == value.shape)


def _scratch(slots: dict, key: str, like: np.ndarray) -> np.ndarray:
    """A scratch buffer shaped like the variable, kept in its slots between steps."""
    buf = slots.get(key)
    if buf is None or buf.shape != like.shape or buf.dtype != like.dtype:
        buf = slots[key] = np.empty_like(like)
    return buf


def rule_for(name: str, hyper: dict):
    """The rule for optimizer `name` (sgd, momentum, adam, rmsprop) with a spec's
    hyper-parameter keys."""
    if name == "sgd":
        return SGDRule(hyper["lr"])
    if name == "momentum":
        return MomentumRule(hyper["lr"], hyper.get("momentum", 0.9), hyper.get("nesterov", False))
    if name == "adam":
        return AdamRule(hyper["lr"], hyper.get("beta1", 0.9), hyper.get("beta2", 0.999),
                        hyper.get("epsilon", 1e-8))
    if name == "rmsprop":
        return RMSPropRule(hyper["lr"], hyper.get("decay", 0.9), hyper.get("momentum", 0.0),
                           hyper.get("epsilon", 1e-10))
    raise ValueError(f"unknown optimizer {name!r}; expected sgd, momentum, adam or rmsprop")
