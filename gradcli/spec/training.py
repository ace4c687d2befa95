"""Build the `train` and `expect` sections."""
from __future__ import annotations

from gradcli.spec.arrays import literal_array
from gradcli.spec.document import Scalar, YNode
from gradcli.spec.fields import (
    check_keys,
    describe,
    did_you_mean,
    expect_bool,
    expect_choice,
    expect_int,
    expect_list,
    expect_map,
    expect_name,
    expect_number,
    fail,
    number_value,
    optional,
    sub,
)
from gradcli.spec.model import ClipSpec, ExpectSpec, InputSpec, Location, TrainSpec
from gradcli.spec.names import Names
from gradcli.spec.sections import (
    CLIP,
    CLIP_KINDS,
    EXPECT,
    EXPECT_TRAIN,
    OPTIMIZER,
    OPTIMIZERS,
    TOLERANCE,
    TRAIN,
)

MAX_STEPS = 100_000
FLOAT32_MAX = 3.4028234663852886e38  # tf.train rounds every hyper-parameter through float32


def build_train(node: YNode | None, outputs: list[str], inputs: dict[str, InputSpec],
                loc: Location | None) -> TrainSpec | None:
    """The `train` section, with every optimizer default filled in."""
    if node is None:
        return None
    train = expect_map(node, "train", "a mapping with loss, optimizer, clip and steps")
    check_keys(train, "train", TRAIN)
    loss_node = optional(train, "loss")
    if loss_node is None:
        if len(outputs) != 1:
            raise fail(train, "train", "missing the required key 'loss' (there are several "
                                       "outputs, so which one to minimize must be said)")
        loss = outputs[0]
    else:
        loss = expect_name(loss_node, "train.loss", "the name of an output")
        if loss not in outputs:
            raise fail(loss_node, "train.loss", f"{loss!r} is not an output",
                       did_you_mean(loss, outputs))
    if not any(spec.trainable for spec in inputs.values()):
        raise fail(train, "train", "there is nothing to train: no input is trainable")
    optimizer, hyper = _optimizer(train.get("optimizer"))
    clip_node = optional(train, "clip")
    clip = _clip(clip_node) if clip_node is not None else None
    steps_node = optional(train, "steps")
    steps = (expect_int(steps_node, "train.steps", minimum=1, maximum=MAX_STEPS)
             if steps_node is not None else 1)
    keys = {sub("train", k): train.key_mark(k).location() for k in train.items}
    return TrainSpec(loss, optimizer, hyper, clip, steps, loc or train.mark.location(), keys)


def _optimizer(node: YNode | None) -> tuple[str, dict]:
    key = "train.optimizer"
    if isinstance(node, Scalar) and node.kind == "str":
        raise fail(node, key, "the optimizer needs a learning rate", f"write {{name: "
                                                                      f"{node.text}, lr: 0.01}}")
    opt = expect_map(node, key, "a mapping such as {name: sgd, lr: 0.1}")
    check_keys(opt, key, OPTIMIZER)
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
                raise fail(opt, key, f"missing the required key {param!r} (the learning rate)")
            hyper[param] = default
        elif param == "nesterov":
            hyper[param] = expect_bool(value, pkey)
        elif param in ("momentum", "beta1", "beta2"):
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
    if len(clip.items) != 1:
        raise fail(clip, key, f"clip takes exactly one of {', '.join(CLIP_KINDS)}, got "
                              f"{len(clip.items)}")
    kind, (_, value) = next(iter(clip.items.items()))
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


def build_expect(node: YNode | None, names: Names, wrt: tuple[str, ...],
                 train: TrainSpec | None, inputs: dict[str, InputSpec]) -> ExpectSpec | None:
    """The `expect` section: expected values, gradients, training results and tolerance."""
    if node is None:
        return None
    expect = expect_map(node, "expect")
    check_keys(expect, "expect", EXPECT)
    values = {}
    values_node = optional(expect, "values")
    if values_node is not None:
        for name, (key_node, value) in expect_map(values_node, "expect.values").items.items():
            key = sub("expect.values", name)
            names.require(name, key_node, key, ("input", "let", "output"),
                          "an input, let or output")
            values[name] = literal_array(value, key, None, "float64")
    gradients = _gradient_table(optional(expect, "gradients"), "expect.gradients", names, wrt)
    true_gradients = _gradient_table(optional(expect, "true_gradients"),
                                     "expect.true_gradients", names, wrt)
    params, loss = _expected_training(optional(expect, "train"), train, inputs)
    rtol, atol = 1e-6, 1e-9
    tolerance = optional(expect, "tolerance")
    if tolerance is not None:
        tol = expect_map(tolerance, "expect.tolerance", "a mapping {rtol, atol}")
        check_keys(tol, "expect.tolerance", TOLERANCE)
        if optional(tol, "rtol") is not None:
            rtol = expect_number(tol.get("rtol"), "expect.tolerance.rtol", minimum=0.0)
        if optional(tol, "atol") is not None:
            atol = expect_number(tol.get("atol"), "expect.tolerance.atol", minimum=0.0)
    finite_node = optional(expect, "finite")
    finite = expect_bool(finite_node, "expect.finite") if finite_node is not None else False
    return ExpectSpec(values, gradients, true_gradients, params, loss, rtol, atol, finite)


def _gradient_table(node: YNode | None, key: str, names: Names, wrt: tuple[str, ...]) -> dict:
    """{output: {wrt name: array, or None for an expected unconnected gradient}}."""
    table: dict = {}
    if node is None:
        return table
    for output, (key_node, per_output) in expect_map(node, key).items.items():
        okey = sub(key, output)
        names.require(output, key_node, okey, ("output",), "an output")
        row = {}
        for name, (name_node, value) in expect_map(per_output, okey, "a mapping {input: "
                                                                     "gradient}").items.items():
            nkey = sub(okey, name)
            if name not in wrt:
                    raise fail(name_node, nkey, f"{name!r} is not in wrt ({', '.join(wrt) or 'empty'})"
                                            ", so no gradient is computed for it",
                           did_you_mean(name, wrt))
            null = isinstance(value, Scalar) and value.kind == "null"
            row[name] = None if null else literal_array(value, nkey, None, "float64")
        table[output] = row
    return table


def _expected_training(node: YNode | None, train: TrainSpec | None,
                       inputs: dict[str, InputSpec]) -> tuple[dict, list | None]:
    if node is None:
        return {}, None
    key = "expect.train"
    if train is None:
        raise fail(node, key, "expect.train needs a train section to check")
    block = expect_map(node, key, "a mapping {params, loss}")
    check_keys(block, key, EXPECT_TRAIN)
    params = {}
    params_node = optional(block, "params")
    if params_node is not None:
        for name, (key_node, value) in expect_map(params_node, sub(key, "params")).items.items():
            pkey = sub(sub(key, "params"), name)
            if name not in inputs or not inputs[name].trainable:
                    raise fail(key_node, pkey, f"{name!r} is not a trainable input",
                           did_you_mean(name, [n for n, s in inputs.items() if s.trainable]))
            params[name] = literal_array(value, pkey, None, "float64")
    loss = None
    loss_node = optional(block, "loss")
    if loss_node is not None:
        seq = expect_list(loss_node, sub(key, "loss"), "a list of numbers")
        loss = []
        for item in seq.items:
            number = number_value(item, sub(key, "loss"), finite=False)
            if number is None:
                raise fail(item, sub(key, "loss"), f"expected a number, got {describe(item)}")
            try:
                loss.append(float(number))
            except OverflowError:
                raise fail(item, sub(key, "loss"), "the number is too large for a float") from None
    return params, loss
