"""References for the training tests that share nothing with gradcli: spec-v2's split,
standardization, batch order and schedules (tests/spec_v2.py), and training done by
tf.compat.v1.train's optimizers (eager, with a float32 learning-rate variable fed each step's
scheduled rate) on gradients from tf.GradientTape."""
from __future__ import annotations

import numpy as np
import tensorflow as tf
from spec_v2 import batches, learning_rate, split, standardized

SEED = 7
N, K, CLASSES = 23, 3, 3
W0 = [[0.3, -0.2, 0.1], [-0.4, 0.25, 0.05], [0.15, 0.1, -0.3]]
B0 = [0.0, 0.1, -0.1]


def dataset() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(42)
    x = rng.normal(size=(N, K)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = rng.integers(0, CLASSES, N)
    x[:, 0] += y  # learnable
    return x, y.astype(np.int64)


def parts(test: float = 0.25, standardize: bool = True, seed: int = SEED):
    """(x_train, y_train, x_test, y_test) by spec-v2's definitions."""
    x, y = dataset()
    te, tr = split(N, test, seed)
    xtr, xte = x[tr], x[te]
    if standardize:
        xtr, xte = standardized(xtr, xte)
    return xtr, y[tr], xte, y[te]


def batch_rows(n_train: int, batch_size: int, epochs: int, seed: int = SEED, cap=None) -> list:
    """The row indices of every step's batch, epoch after epoch, capped at `cap` steps."""
    out = [rows for e in range(epochs) for rows in batches(n_train, batch_size, seed, e)]
    return out[:cap] if cap is not None else out


def tf_optimizer(name: str, lr_var, hyper: dict):
    train = tf.compat.v1.train
    if name == "sgd":
        return train.GradientDescentOptimizer(lr_var)
    if name == "momentum":
        return train.MomentumOptimizer(lr_var, hyper.get("momentum", 0.9))
    if name == "adam":
        return train.AdamOptimizer(lr_var)
    return train.RMSPropOptimizer(lr_var, decay=hyper.get("decay", 0.9),
                                  momentum=hyper.get("momentum", 0.0),
                                  epsilon=hyper.get("epsilon", 1e-10))


def softmax_loss(x, y, w, b, sign_ste: bool = False):
    if sign_ste:
        w = ste_sign(w)
    logits = tf.matmul(x, w) + b
    onehot = tf.one_hot(y, CLASSES, dtype=x.dtype)
    return tf.reduce_mean(-tf.reduce_sum(onehot * tf.nn.log_softmax(logits, axis=1), axis=1)), logits


@tf.custom_gradient
def ste_sign(x):
    def grad(dy):
        return tf.where(tf.abs(x) <= 1, dy, tf.zeros_like(dy))
    return tf.sign(x), grad


def tf_train(name: str, lr: float, hyper: dict, schedule, rows: list, data, *,
             constraint=None, clip_global=None, sign_ste=False, eval_at=()):
    """Losses before each step, final (W, b), final loss on the training part, and the
    accuracy on (train, test) after each step count in eval_at."""
    xtr, ytr, xte, yte = data
    w, b = tf.Variable(np.array(W0)), tf.Variable(np.array(B0))
    lr_var = tf.Variable(np.float32(lr))
    opt = tf_optimizer(name, lr_var, hyper)
    losses, accuracy = [], {}

    def acc(x, y):
        _, logits = softmax_loss(tf.constant(x), tf.constant(y), w, b, sign_ste)
        return float(np.mean(np.argmax(logits.numpy(), axis=1) == y))

    if 0 in eval_at:
        accuracy[0] = (acc(xtr, ytr), acc(xte, yte))
    for t, r in enumerate(rows):
        with tf.GradientTape() as tape:
            loss, _ = softmax_loss(tf.constant(xtr[r]), tf.constant(ytr[r]), w, b, sign_ste)
        grads = tape.gradient(loss, [w, b])
        if clip_global is not None:
            grads, _ = tf.clip_by_global_norm(grads, clip_global)
        losses.append(float(loss))
        lr_var.assign(np.float32(learning_rate(lr, schedule, t)))
        opt.apply_gradients(zip(grads, [w, b]))
        if constraint is not None:
            w.assign(constraint(w))
        if t + 1 in eval_at:
            accuracy[t + 1] = (acc(xtr, ytr), acc(xte, yte))
    final, _ = softmax_loss(tf.constant(xtr), tf.constant(ytr), w, b, sign_ste)
    return losses, w.numpy(), b.numpy(), float(final), accuracy
