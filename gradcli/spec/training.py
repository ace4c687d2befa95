"""Build the `train` section (imported only for a spec that has one; expect: is spec/expect.py).

`train` holds v1's keys (loss, optimizer, clip, steps) and spec-v2's training on data
(batch_size, epochs, schedule, constraints, metrics, eval_every, on_nonfinite);
constraints and metrics are expressions, parsed and checked like lets.
"""
from __future__ import annotations

from gradcli.lang.checks import Scope
from gradcli.spec.arrays import FLOAT_DTYPES
from gradcli.spec.document import Mark, Scalar, YNode
from gradcli.spec.fields import (
    block_place,
    check_keys,
    did_you_mean,
    expect_bool,
    expect_choice,
    expect_int,
    expect_list,
    expect_map,
    expect_name,
    expect_number,
    fail,
    only_key,
    optional,
    sub,
)
from gradcli.spec.model import ClipSpec, InputSpec, Location, ScheduleSpec, TrainSpec
from gradcli.spec.names import Names
from gradcli.spec.sections import (
    CLIP,
    FLOAT32_MAX,
    MAX_BATCH,
    MAX_EPOCHS,
    MAX_STEPS,
    ON_NONFINITE,
    OPTIMIZER,
    OPTIMIZERS,
    SCHEDULE,
    SCHEDULE_KINDS,
    SCHEDULES,
    TRAIN,
)
from gradcli.spec.sites import check_at, parse_at


def build_train(node: YNode | None, outputs: list[str], inputs: dict[str, InputSpec],
                loc: Location | None, *, names: Names | None = None,
                functions: dict | None = None, has_data: bool = False) -> TrainSpec | None:
    """The `train` section, with every optimizer default filled in.

    Without data, steps default to 1 (spec-v1); with data, epochs and steps may not both be
    missing. `names` and `functions` (user function -> args) scope the expressions of
    constraints and metrics.
    """
    if node is None:
        return None
    train = expect_map(node, "train", "a mapping with loss, optimizer, clip and steps")
    named = block_place(train, loc)  # `train:` itself, for a missing key
    check_keys(train, "train", TRAIN, named=named)
    loss_node = optional(train, "loss")
    if loss_node is None:
        if len(outputs) != 1:
            raise fail(named, "train", "missing the required key 'loss' (there are several "
                                       "outputs, so which one to minimize must be said)")
        loss = outputs[0]
    else:
        loss = expect_name(loss_node, "train.loss", "the name of an output")
        if loss not in outputs:
            raise fail(loss_node, "train.loss", f"{loss!r} is not an output",
                       did_you_mean(loss, outputs))
    if not any(spec.trainable for spec in inputs.values()):
        raise fail(train, "train", "there is nothing to train: no input is trainable")
    optimizer, hyper = _optimizer(train.get("optimizer"), train.key_mark("optimizer"))
    clip_node = optional(train, "clip")
    clip = _clip(clip_node) if clip_node is not None else None
    steps_node = optional(train, "steps")
    steps = (expect_int(steps_node, "train.steps", minimum=1, maximum=MAX_STEPS)
             if steps_node is not None else None)
    epochs_node, batch_node = optional(train, "epochs"), optional(train, "batch_size")
    epochs = batch_size = None
    if not has_data:
        for key_name, given in (("epochs", epochs_node), ("batch_size", batch_node)):
            if given is not None:
                raise fail(given, sub("train", key_name), f"{key_name} needs a data: section "
                           "(passes over its training part, in batches)",
                           "without data, train for a number of steps: steps: N")
        steps = 1 if steps is None else steps
    else:
        if epochs_node is not None:
            epochs = expect_int(epochs_node, "train.epochs", minimum=1, maximum=MAX_EPOCHS)
        if batch_node is not None:
            batch_size = expect_int(batch_node, "train.batch_size", minimum=1, maximum=MAX_BATCH)
        if epochs is None and steps is None:
            raise fail(named, "train", "epochs and steps may not both be missing when there is "
                                       "data", "add epochs: N (passes over the training part)")
    scope = _expression_scope(inputs, names, functions)
    eval_node = optional(train, "eval_every")
    on_node = optional(train, "on_nonfinite")
    schedule_node = optional(train, "schedule")
    keys = {sub("train", k): train.key_mark(k).location() for k in train.items}
    return TrainSpec(loss, optimizer, hyper, clip, steps, loc or train.mark.location(), keys,
                     batch_size=batch_size, epochs=epochs,
                     schedule=None if schedule_node is None else _schedule(schedule_node),
                     constraints=_constraints(optional(train, "constraints"), inputs, scope),
                     metrics=_metrics(optional(train, "metrics"), scope),
                     eval_every=(1 if eval_node is None else
                                 expect_int(eval_node, "train.eval_every", minimum=1,
                                            maximum=MAX_STEPS)),
                     on_nonfinite=("stop" if on_node is None else
                                   expect_choice(on_node, "train.on_nonfinite", ON_NONFINITE)))


def _expression_scope(inputs: dict, names: Names | None, functions: dict | None) -> Scope:
    """What a constraint or a metric may use: every input, let and output of the spec."""
    known = set(inputs)
    if names is not None:
        known |= set(names.of("input", "let", "output"))
    return Scope(frozenset(known), dict(functions or {}))


def _schedule(node: YNode) -> ScheduleSpec:
    key = "train.schedule"
    schedule = expect_map(node, key, "a mapping such as {cosine: {steps: 100}}")
    check_keys(schedule, key, SCHEDULE)
    kind, value = only_key(schedule, key, SCHEDULE.keys, "schedule takes")
    kkey = sub(key, kind)
    section = next(s for s in SCHEDULE_KINDS if s.path == kkey)
    params_node = expect_map(value, kkey, f"a mapping of {', '.join(SCHEDULES[kind])}")
    check_keys(params_node, kkey, section, named=schedule.key_mark(kind))
    params: dict = {}
    for param in SCHEDULES[kind]:
        pnode = params_node.get(param)
        if param in ("steps", "every"):
            params[param] = expect_int(pnode, sub(kkey, param), minimum=1, maximum=MAX_STEPS)
        else:
            params[param] = expect_number(pnode, sub(kkey, param), positive=True)
            if params[param] > FLOAT32_MAX:
                raise fail(pnode, sub(kkey, param), f"{params[param]:g} is beyond float32's range")
    return ScheduleSpec(kind, params)


def _constraints(node: YNode | None, inputs: dict[str, InputSpec], scope: Scope) -> dict:
    """{variable: Expr}: each a trainable float input, each expression checked like a let."""
    key = "train.constraints"
    if node is None:
        return {}
    found = {}
    trainable = [n for n, s in inputs.items() if s.trainable and s.dtype in FLOAT_DTYPES]
    for name, (key_node, value) in expect_map(node, key, "a mapping {variable: "
                                                         "expression}").items.items():
        ckey = sub(key, name)
        if name not in trainable:
            what = ("an input that is not trainable" if name in inputs
                    else "not an input")
            raise fail(key_node, ckey, f"{name!r} is {what}; a constraint replaces a trainable "
                                       "input's value after each step", did_you_mean(name, trainable))
        site = parse_at(value, ckey)
        check_at(site, scope)
        found[name] = site.expr
    return found


def _metrics(node: YNode | None, scope: Scope) -> dict:
    """{metric: Expr}: names that are not 'loss' (final.loss is the loss), checked like lets."""
    key = "train.metrics"
    if node is None:
        return {}
    found = {}
    for name, (key_node, value) in expect_map(node, key, "a mapping {metric: "
                                                         "expression}").items.items():
        mkey = sub(key, name)
        expect_name(key_node, mkey, "a metric name")
        if name == "loss":
            raise fail(key_node, mkey, "'loss' is taken: final.loss is the training loss",
                       "call the metric something else, e.g. train_loss")
        site = parse_at(value, mkey)
        check_at(site, scope)
        found[name] = site.expr
    return found


def _optimizer(node: YNode | None, named: Mark) -> tuple[str, dict]:
    key = "train.optimizer"
    if isinstance(node, Scalar) and node.kind == "str":
        raise fail(node, key, "the optimizer needs a learning rate", f"write {{name: "
                                                                      f"{node.text}, lr: 0.01}}")
    opt = expect_map(node, key, "a mapping such as {name: sgd, lr: 0.1}")
    check_keys(opt, key, OPTIMIZER, named=named)
    name = expect_choice(opt.get("name"), sub(key, "name"), tuple(OPTIMIZERS))
    defaults = OPTIMIZERS[name]
    hyper: dict = {}
    for param, (key_node, _) in opt.items.items():
        if param != "name" and param not in defaults:
            raise fail(key_node, sub(key, param), f"{name} has no hyper-parameter {param!r}; it "
                                                  f"takes {', '.join(defaults)}")
    for param, default in defaults.items():
        value = optional(opt, param)
        pkey = sub(key, param)
        if value is None:
            if default is None:
                raise fail(block_place(opt, named), key,
                           f"missing the required key {param!r} (the learning rate)")
            hyper[param] = default
        elif param == "nesterov":
            hyper[param] = expect_bool(value, pkey)
        elif param in ("momentum", "beta1", "beta2", "decay"):
            hyper[param] = expect_number(value, pkey, minimum=0.0, below=1.0)
        else:
            hyper[param] = expect_number(value, pkey, positive=True)
            if hyper[param] > FLOAT32_MAX:
                raise fail(value, pkey, f"{hyper[param]:g} is beyond float32's range (max "
                                        f"{FLOAT32_MAX:.7g}): tf.train turns hyper-parameters "
                                        "into float32 tensors")
    return name, hyper


def _clip(node: YNode) -> ClipSpec:
    key = "train.clip"
    clip = expect_map(node, key, "a mapping {norm: N}, {global_norm: N} or {value: [lo, hi]}")
    check_keys(clip, key, CLIP)
    kind, value = only_key(clip, key, CLIP.keys, "clip takes")
    if kind != "value":
        return ClipSpec(kind, expect_number(value, sub(key, kind), positive=True))
    pair = expect_list(value, sub(key, kind), "[lo, hi]")
    if len(pair.items) != 2:
        raise fail(pair, sub(key, kind), f"expected [lo, hi], got a list of {len(pair.items)}")
    lo = expect_number(pair.items[0], sub(key, kind))
    hi = expect_number(pair.items[1], sub(key, kind))
    if not lo < hi:
        raise fail(pair, sub(key, kind), f"clip value needs lo < hi, got [{lo:g}, {hi:g}]")
    return ClipSpec("value", (lo, hi))
