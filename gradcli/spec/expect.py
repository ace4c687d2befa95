"""Build the `expect` section: expected values, gradients, training results and tolerance.

Expected arrays are checked literals (spec/arrays.py), made into arrays when a run compares.
An expected array for an input (its value, its gradient, its trained value) must have the
input's shape, which is known now: a wrong one is refused here with its place (`gradcli check`
catches it), not found by the run. A let's or an output's shape is known only when a run makes
it, and a scalar is compared with every element, as the run compares. Likewise an expected
loss list longer than the run's steps can never be met (shorter can: a stopped training):
refused here against train.steps, and against the step count an epochs-based data spec
reaches once its data is loaded (refuse_long_loss, called by training before the first step).
"""
from __future__ import annotations

from gradcli.spec.arrays import Arrays
from gradcli.spec.document import Scalar, YNode
from gradcli.spec.expect_final import expected_final
from gradcli.spec.expect_numbers import expected_array, expected_number, first_boolean, refuse_booleans
from gradcli.spec.fields import (
    check_keys,
    describe,
    did_you_mean,
    expect_bool,
    expect_list,
    expect_map,
    expect_number,
    fail,
    optional,
    sub,
)
from gradcli.spec.model import ExpectSpec, InputSpec, Location, TrainSpec
from gradcli.spec.names import Names
from gradcli.spec.sections import EXPECT, EXPECT_TRAIN, TOLERANCE


def build_expect(node: YNode | None, names: Names, wrt: tuple[str, ...],
                 train: TrainSpec | None, inputs: dict[str, InputSpec]) -> ExpectSpec | None:
    """The `expect` section: expected values, gradients, training results and tolerance."""
    if node is None:
        return None
    expect = expect_map(node, "expect")
    check_keys(expect, "expect", EXPECT)
    values, booleans = {}, {}
    values_node = optional(expect, "values")
    if values_node is not None:
        for name, (key_node, value) in expect_map(values_node, "expect.values").items.items():
            key = sub("expect.values", name)
            names.require(name, key_node, key, ("input", "let", "output"),
                          "an input, let or output")
            values[name] = expected_array(value, key, booleans=True)
            _refuse_shape(value, key, values[name], inputs.get(name), "value")
            if values[name].dtype == "bool":  # true/false only: a mix with numbers is refused
                first = first_boolean(value)
                booleans[name] = (first.mark.location(), describe(first))
    # an input's dtype is known now; a let's or an output's when a run makes it (runner)
    refuse_booleans(booleans, {name: spec.dtype for name, spec in inputs.items()})
    gradients = _gradient_table(optional(expect, "gradients"), "expect.gradients", names, wrt,
                                inputs)
    true_gradients = _gradient_table(optional(expect, "true_gradients"),
                                     "expect.true_gradients", names, wrt, inputs)
    params, loss, loss_at, final = _expected_training(optional(expect, "train"), train, inputs)
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
    return ExpectSpec(Arrays(values), gradients, true_gradients, Arrays(params), loss, rtol, atol,
                      finite, final, {n: b for n, b in booleans.items() if n not in inputs},
                      loss_at)


def _refuse_shape(node: YNode, key: str, expected, spec: InputSpec | None, what: str) -> None:
    """A placed SpecError when an expected array (not a scalar) for an input has another shape
    than the input (its value, gradient and trained value all have the input's shape)."""
    if spec is None or not expected.shape or expected.shape == spec.recipe.shape:
        return
    raise fail(node, key, f"expected a {what} of shape {_shape(spec.recipe.shape)} (the shape "
                          f"of input {spec.name!r}), got shape {_shape(expected.shape)}",
               "a single number is compared with every element; --set expect=null runs the "
               "spec without its expect")


def _shape(shape: tuple[int, ...]) -> str:
    return "scalar" if not shape else f"[{', '.join(map(str, shape))}]"


def _gradient_table(node: YNode | None, key: str, names: Names, wrt: tuple[str, ...],
                    inputs: dict[str, InputSpec]) -> dict:
    """{output: Arrays {wrt name: array, or None for an expected unconnected gradient}}."""
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
            row[name] = None if null else expected_array(value, nkey, booleans=False)
            if row[name] is not None:
                _refuse_shape(value, nkey, row[name], inputs.get(name), "gradient")
        table[output] = Arrays(row)
    return table


def _expected_training(node: YNode | None, train: TrainSpec | None,
                       inputs: dict[str, InputSpec]) -> tuple[dict, list | None, Location | None,
                                                              dict]:
    if node is None:
        return {}, None, None, {}
    key = "expect.train"
    if train is None:
        raise fail(node, key, "expect.train needs a train section to check")
    block = expect_map(node, key, "a mapping {params, loss, final}")
    check_keys(block, key, EXPECT_TRAIN)
    params = {}
    params_node = optional(block, "params")
    if params_node is not None:
        for name, (key_node, value) in expect_map(params_node, sub(key, "params")).items.items():
            pkey = sub(sub(key, "params"), name)
            if name not in inputs or not inputs[name].trainable:
                    raise fail(key_node, pkey, f"{name!r} is not a trainable input",
                           did_you_mean(name, [n for n, s in inputs.items() if s.trainable]))
            params[name] = expected_array(value, pkey, booleans=False)
            _refuse_shape(value, pkey, params[name], inputs[name], "trained value")
    loss, loss_at = None, None
    loss_node = optional(block, "loss")
    if loss_node is not None:
        seq = expect_list(loss_node, sub(key, "loss"), "a list of numbers")
        loss = [expected_number(item, sub(key, "loss")) for item in seq.items]
        loss_at = loss_node.mark.location()
        if train.steps is not None:  # with epochs too: steps caps them
            refuse_long_loss(loss, loss_at, train.steps, f"train.steps is {train.steps}")
    return params, loss, loss_at, expected_final(optional(block, "final"), sub(key, "final"),
                                                 train.metrics)


def refuse_long_loss(loss: list | None, at: Location | None, steps: int, why: str) -> None:
    """A placed SpecError when an expected loss list is longer than the `steps` a run takes
    (one loss a step; `why` says where that count comes from)."""
    if loss is not None and len(loss) > steps:
        raise at.error(f"expected at most {steps} losses ({why}), got {len(loss)}",
                       key="expect.train.loss", hint="a training stopped early records fewer")
