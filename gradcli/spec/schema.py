"""The JSON Schema (draft 2020-12) of a spec, for editors and the YAML language server.

It describes shapes and enums, so keys complete and typos show; the loader
remains the judge of everything a schema cannot say (names in scope, arity).
"""
from __future__ import annotations

from gradcli.datasets import DATASETS
from gradcli.ops import BUILTIN_GRADIENTS, DTYPES, LANGUAGE_FORMS, OPS
from gradcli.spec.sections import (
    BACKENDS,
    CLIP,
    DATA,
    DATA_LOAD,
    EXPECT,
    EXPECT_FINAL_METRIC,
    EXPECT_TRAIN,
    FLOAT32_MAX,
    FUNCTION,
    INPUT,
    MAX_STEPS,
    ON_NONFINITE,
    OPTIMIZER,
    OPTIMIZERS,
    OVERRIDE_ENTRY,
    SCHEDULE,
    SCHEDULE_KINDS,
    SOURCES,
    SPEC_DTYPES,
    TOLERANCE,
    TOP,
    TRAIN,
    UNCONNECTED,
    Section,
)

_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"


def _d(description: str, **schema) -> dict:
    return {"description": description, **schema}


def _object(section: Section, description: str | None, properties: dict, **extra) -> dict:
    """A closed object whose keys and required keys are the Section's, the loader's own."""
    if set(properties) != set(section.keys):
        raise AssertionError(f"the schema of {section.path or 'the spec'} describes "
                             f"{sorted(properties)}; the loader declares {sorted(section.keys)}")
    schema = {} if description is None else {"description": description}
    schema.update(type="object", additionalProperties=False,
                  properties={key: properties[key] for key in section.keys})
    if section.required:
        schema["required"] = list(section.required)
    return {**schema, **extra}


def _number(description: str, **extra) -> dict:
    # PyYAML reads 1e-3 (no dot) as a string, and the loader accepts it, so does the schema.
    return _d(description, anyOf=[{"type": "number", **extra},
                                  {"type": "string", "pattern": r"^[+-]?[0-9.]+[eE][+-]?[0-9]+$"}])


def _tensor(description: str) -> dict:
    return _d(description, anyOf=[{"type": ["number", "boolean", "string"]},
                                  {"type": "array", "items": {"$ref": "#/$defs/literal"}}])


def _names(description: str) -> dict:
    return _d(description, anyOf=[{"type": "string", "pattern": _NAME},
                                  {"type": "array", "items": {"type": "string", "pattern": _NAME},
                                   "uniqueItems": True}])


def _expression(description: str) -> dict:
    return _d(description + " (an expression: " + ", ".join(sorted(OPS)[:12]) + ", ..., and "
              + ", ".join(LANGUAGE_FORMS) + ")", type=["string", "number"])


def _gradients(description: str) -> dict:
    return _d(description, anyOf=[{"type": "string"},
                                  {"type": "array", "minItems": 1,
                                   "items": {"type": ["string", "null"]}}])


def _shape(description: str) -> dict:
    return _d(description, anyOf=[{"type": "integer", "minimum": 0},
                                  {"type": "array", "maxItems": 8,
                                   "items": {"type": "integer", "minimum": 0}}])


def _pair(description: str) -> dict:
    return _d(description, type="array", minItems=2, maxItems=2, items={"type": "number"})


def _input() -> dict:
    sources = {
        "value": _tensor("a literal: a number or nested lists"),
        "uniform": _pair("[low, high]: a seeded uniform draw (needs shape)"),
        "normal": _pair("[mean, std]: a seeded normal draw (needs shape)"),
        "zeros": _shape("SHAPE: a tensor of zeros"),
        "ones": _shape("SHAPE: a tensor of ones"),
        "linspace": _d("[start, stop, count]: evenly spaced numbers", type="array",
                       minItems=3, maxItems=3),
        "load": _d("FILE.npz beside the spec (relative; no '..' out of its directory)",
                   type="string", pattern=r"\.npz$"),
    }
    assert tuple(sources) == SOURCES
    mapping = _object(INPUT, None, {
        **sources,
        "shape": _shape("the shape: required for uniform/normal, a reshape else"),
        "trainable": _d("differentiated and trained (default: true for float inputs; int and "
                        "bool inputs never are)", type="boolean"),
        "dtype": _d("the dtype (default: the spec's dtype)", enum=list(DTYPES)),
        "key": _d("the array's name inside the .npz (default: its only array)", type="string"),
    }, oneOf=[{"required": [s]} for s in sources])
    return _d("a leaf tensor: a literal, or a mapping with exactly one of "
              + ", ".join(sources), anyOf=[_tensor("a literal"), mapping])


def _override_map() -> dict:
    op = _d("an op type, matched case-insensitively (Sign, Identity work)",
            anyOf=[{"enum": sorted(op for op, spec in OPS.items() if not spec.interpreted)},
                   {"type": "string"}])  # an interpreted call builds no op: no op type
    gradient = _d("a gradient registered under register, or a built-in: "
                  + ", ".join(BUILTIN_GRADIENTS), type="string")
    entry = _object(OVERRIDE_ENTRY, None, {
        "op": op, "gradient": gradient,
        "scope": _names("only ops built while computing these let/output names")})
    return _d("op type -> registered gradient, like tf gradient_override_map",
              anyOf=[{"type": "object", "additionalProperties": gradient,
                      "propertyNames": {"pattern": _NAME}},
                     {"type": "array", "items": entry}])


def _train() -> dict:
    hyper = {"lr": _number("learning rate (required; rounded through float32, as tf.train does)",
                           exclusiveMinimum=0, maximum=FLOAT32_MAX),
             "momentum": _number("momentum (default 0.9)", minimum=0, exclusiveMaximum=1),
             "nesterov": _d("Nesterov momentum (default false)", type="boolean"),
             "beta1": _number("Adam beta1 (default 0.9)", minimum=0, exclusiveMaximum=1),
             "beta2": _number("Adam beta2 (default 0.999)", minimum=0, exclusiveMaximum=1),
             "epsilon": _number("epsilon (Adam: default 1e-8, as tf.train.AdamOptimizer; rmsprop: "
                                "default 1e-10, as tf.train.RMSPropOptimizer)",
                                exclusiveMinimum=0, maximum=FLOAT32_MAX),
             "decay": _number("rmsprop decay of the mean square (default 0.9)", minimum=0,
                              exclusiveMaximum=1)}
    optimizer = _object(OPTIMIZER, "the optimizer and its hyper-parameters",
                        {"name": _d("the optimizer", enum=list(OPTIMIZERS)), **hyper})
    clip = _object(CLIP, "gradient clipping: exactly one of norm, global_norm, value", {
        "norm": _number("per-tensor clip_by_norm bound", exclusiveMinimum=0),
        "global_norm": _number("clip_by_global_norm bound", exclusiveMinimum=0),
        "value": _pair("[lo, hi]: clip_by_value bounds, lo < hi")},
        minProperties=1, maxProperties=1)
    return _object(TRAIN, "optimizer steps on the trainable inputs", {
        "loss": _d("the output to minimize (default: the only output)", type="string",
                   pattern=_NAME),
        "optimizer": optimizer, "clip": clip,
        "steps": _d("number of steps (default 1 without data); with data a cap on the "
                    "epochs' steps", type="integer", minimum=1, maximum=MAX_STEPS),
        "batch_size": _d("rows per batch (with data; default the whole training part)",
                         type="integer", minimum=1),
        "epochs": _d("passes over the training part (with data)", type="integer", minimum=1),
        "schedule": _schedule(),
        "constraints": _d("{trainable input: expression} applied after every step",
                          type="object", propertyNames={"pattern": _NAME},
                          additionalProperties=_expression("the variable's new value")),
        "metrics": _d("{metric: expression} evaluated on the training and test parts",
                      type="object", propertyNames={"pattern": _NAME},
                      additionalProperties=_expression("a scalar")),
        "eval_every": _d("epochs (with data) or steps between metric evaluations (default 1)",
                         type="integer", minimum=1, maximum=MAX_STEPS),
        "on_nonfinite": _d("what a non-finite loss does (default stop)",
                           enum=list(ON_NONFINITE))})


def _schedule() -> dict:
    words = {"steps": _d("S: the steps of the half cosine", type="integer", minimum=1,
                         maximum=MAX_STEPS),
             "every": _d("steps between decays", type="integer", minimum=1, maximum=MAX_STEPS),
             "gamma": _number("decay factor", exclusiveMinimum=0, maximum=FLOAT32_MAX)}
    texts = {"cosine": "lr * 0.5 * (1 + cos(pi * min(t, steps) / steps))",
             "step": "lr * gamma ** floor(t / every)", "exponential": "lr * gamma ** t"}
    kinds = {}
    for s in SCHEDULE_KINDS:
        kind = s.path.rsplit(".", 1)[1]
        kinds[kind] = _object(s, texts[kind], {k: words[k] for k in s.keys})
    return _object(SCHEDULE, "the learning-rate schedule: exactly one of cosine, step, "
                             "exponential", kinds, minProperties=1, maxProperties=1)


def _data() -> dict:
    bundled = _object(DATA_LOAD, "a data set scikit-learn ships (needs pip install "
                                 "'gradcli[data]')",
                      {"dataset": _d("the bundled set", enum=list(DATASETS))})
    return _object(DATA, "a data set, split once (seeded), fed to the spec batch by batch", {
        "load": _d("FILE.csv (header row) or FILE.npz beside the spec, or {dataset: NAME}",
                   anyOf=[{"type": "string", "pattern": r"\.(csv|npz)$"}, bundled]),
        "label": _d("the csv column holding the labels (default: the last)", type="string"),
        "features": _d("the name that receives a batch of feature rows (and the .npz key)",
                       type="string", pattern=_NAME),
        "labels": _d("the name that receives the batch's labels (and the .npz key)",
                     type="string", pattern=_NAME),
        "test": _number("held-out share of the rows (default 0: no test part)", minimum=0,
                        exclusiveMaximum=1),
        "standardize": _d("scale features by the training part's mean and std (default "
                          "false)", type="boolean")})


def _expect() -> dict:
    table = _d("{output: {wrt name: expected gradient, or null for unconnected}}", type="object",
               additionalProperties={"type": "object",
                                     "additionalProperties": {"anyOf": [
                                         {"type": "null"}, {"$ref": "#/$defs/literal"}]}})
    train = _object(EXPECT_TRAIN, "expected training results", {
        "params": _d("{input: value after training}", type="object"),
        "loss": _d("expected loss per step", type="array", items={"type": ["number", "string"]}),
        "final": _d("expected final values, shaped as the JSON's train.final: loss (on the whole "
                    "training part after the last step) and each metric's value on the train "
                    "and test parts, within expect.tolerance", type="object",
                    properties={"loss": _number("the final loss")},
                    propertyNames={"pattern": _NAME},
                    additionalProperties=_object(EXPECT_FINAL_METRIC, "a metric of "
                                                 "train.metrics: its final values", {
                                                     "train": _number("on the training part"),
                                                     "test": _number("on the test part")}))})
    tolerance = _object(TOLERANCE, "comparison tolerance", {
        "rtol": _number("relative (default 1e-6)", minimum=0),
        "atol": _number("absolute (default 1e-9)", minimum=0)})
    return _object(EXPECT, "expected results: the spec becomes a regression test", {
        "values": _d("{name: expected value} for inputs, lets and outputs", type="object",
                     additionalProperties={"$ref": "#/$defs/literal"}),
        "gradients": table | {"description": "expected overridden (used) gradients: "
                                             + table["description"]},
        "true_gradients": table | {"description": "expected true gradients: "
                                                  + table["description"]},
        "train": train, "tolerance": tolerance,
        "finite": _d("true: fail when any value, gradient or trained parameter is NaN or "
                     "infinite", type="boolean")})


def json_schema() -> dict:
    """The spec's JSON Schema, with a description on every key."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://gradcli.invalid/schema/spec-v1.json",
        "title": "gradcli experiment spec",
        "description": "A declarative gradient experiment: inputs, expressions, gradient "
                       "overrides, optional training and expectations.",
        "$defs": {"literal": _d("a number or nested lists of numbers",
                                anyOf=[{"type": ["number", "boolean", "string"]},
                                       {"type": "array", "items": {"$ref": "#/$defs/literal"}}])},
        **_object(TOP, None, {
            "name": _d("the experiment's name (default: the file's stem)", type="string"),
            "description": _d("what the experiment shows", type="string"),
            "backend": _d("where gradients are computed (default numpy)", enum=list(BACKENDS)),
            "dtype": _d("float dtype of float inputs (default float64)", enum=list(SPEC_DTYPES)),
            "seed": _d("every random draw derives from it (default 0)", type="integer",
                       minimum=0),
            "inputs": _d("leaf tensors by name", type="object",
                         propertyNames={"pattern": _NAME}, additionalProperties=_input()),
            "let": _d("named intermediates, in order; \"a, b\" unpacks a multi-output op",
                      type="object", additionalProperties=_expression("an intermediate")),
            "outputs": _d("the results that are differentiated", type="object", minProperties=1,
                          propertyNames={"pattern": _NAME},
                          additionalProperties=_expression("an output")),
            "wrt": _names("differentiate with respect to these (default: every trainable "
                          "input)"),
            "register": _d("named gradients, like tf.RegisterGradient: x, x0.. are the op's "
                           "inputs, y, y0.. its outputs, dy, dy0.. the upstream gradients",
                           type="object", propertyNames={"pattern": _NAME},
                           additionalProperties=_gradients("one expression, or a list with "
                                                           "none where an input gets none")),
            "override_map": _override_map(),
            "functions": _d("custom-gradient functions, like tf.custom_gradient", type="object",
                            propertyNames={"pattern": _NAME},
                            additionalProperties=_object(FUNCTION, None, {
                                "args": _d("argument names", type="array",
                                           items={"type": "string", "pattern": _NAME}),
                                "let": _d("the function's own intermediates, in order; forward "
                                          "and gradient see them", type="object",
                                          propertyNames={"pattern": _NAME},
                                          additionalProperties=_expression("an intermediate")),
                                "forward": _expression("the forward computation over args"),
                                "gradient": _gradients("one gradient per arg (dy is the "
                                                       "upstream gradient); none for none"),
                            })),
            "stop_gradients": _names("treated as constants, like tf.gradients(stop_gradients=)"),
            "grad_ys": _d("upstream gradient per output (default ones)", type="object",
                          additionalProperties={"$ref": "#/$defs/literal"}),
            "unconnected": _d("how an unconnected gradient is reported (default none: null)",
                              enum=list(UNCONNECTED)),
            "data": _data(),
            "train": _train(),
            "expect": _expect(),
            "sweep": _d("runs for `gradcli sweep`: dotted --set keys to lists of values (every "
                        "combination), or zip: {key: [...]} (lists taken element by element)",
                        type="object", additionalProperties={"type": "array", "minItems": 1},
                        properties={"zip": _d("dotted keys to lists of equal length, taken "
                                              "element by element (one axis of the grid)",
                                              type="object", additionalProperties={
                                                  "type": "array", "minItems": 1})}),
        }),
    }
