"""Which runs of a sweep can replay one built graph: the structural key of an Experiment.

Two experiments with the same key build the same graph; they differ only in
values the built Program reads when it runs (Program.rebind):
  - input values (same names, shapes, dtypes and trainable flags), so a seed that
    draws other inputs feeds new values to the same graph;
  - `seed` itself, unless an expression draws random numbers (uniform, normal,
    bernoulli are drawn once, when the graph is built: then the seed is structural);
  - the optimizer's hyper-parameters (lr, momentum, ...) and `train.steps`;
  - name, description, expect (checked on the result, not built).
Everything else (expressions, override_map, register, functions, clip bounds,
dtype, backend, data, ...) is part of the key: a run that changes it builds its own.
"""
from __future__ import annotations

import json
import re

from ..ops import DRAWS

VALUE_ONLY_TOP = ("name", "description", "expect", "sweep", "seed", "inputs")
RANDOM_CALL = re.compile(rf"\b({'|'.join(DRAWS)})\s*\(")


def structure_key(experiment) -> str:
    """A text equal for two experiments exactly when one built graph serves both."""
    raw = experiment.raw if isinstance(experiment.raw, dict) else {}
    shape = {k: v for k, v in raw.items() if k not in VALUE_ONLY_TOP}
    if _draws_random(shape):
        shape["seed"] = experiment.seed
    shape["inputs"] = {name: [list(spec.value.shape), str(spec.value.dtype), spec.trainable]
                       for name, spec in experiment.inputs.items()}
    train = shape.get("train")
    if isinstance(train, dict):
        train = {k: v for k, v in train.items() if k != "steps"}
        optimizer = train.get("optimizer")
        if isinstance(optimizer, dict):
            train["optimizer"] = {"name": optimizer.get("name")}
        shape["train"] = train
    shape["backend"] = experiment.backend
    shape["dtype"] = experiment.dtype
    return json.dumps(shape, sort_keys=True, default=repr)


def _draws_random(node) -> bool:
    if isinstance(node, str):
        return bool(RANDOM_CALL.search(node))
    if isinstance(node, dict):
        return any(_draws_random(v) for v in node.values())
    if isinstance(node, list):
        return any(_draws_random(v) for v in node)
    return False
