"""Every mapping of a spec and its keys, declared once.

The loader checks each mapping against its Section (unknown keys, missing
required keys) and the JSON Schema builds each object's properties, required
list and additionalProperties from the same Section, so the two cannot drift.
"""
from __future__ import annotations

from gradcli.record import Factory, record


@record
class Section:
    """The keys one mapping may hold, those it must, and how a missing one is explained."""

    path: str                       # where the mapping sits: "" (top), "inputs.*", "train.clip"
    keys: tuple[str, ...]
    required: tuple[str, ...] = ()
    missing: dict = Factory(dict)   # key -> (message, hint) when it is absent


# Every optimizer's hyper-parameters and defaults (None: required). Adam's epsilon is
# tf.train.AdamOptimizer's (1e-8), whose update rule gradcli uses.
OPTIMIZERS = {
    "sgd": {"lr": None},
    "momentum": {"lr": None, "momentum": 0.9, "nesterov": False},
    "adam": {"lr": None, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
    "rmsprop": {"lr": None, "decay": 0.9, "momentum": 0.0, "epsilon": 1e-10},
}
# Every schedule's parameters (spec-v2's formulas; none has a default).
SCHEDULES = {"cosine": ("steps",), "step": ("every", "gamma"), "exponential": ("gamma",)}
ON_NONFINITE = ("stop", "error", "continue")
SOURCES = ("value", "uniform", "normal", "zeros", "ones", "linspace", "load")
CLIP_KINDS = ("norm", "global_norm", "value")
BACKENDS = ("numpy", "torch", "jax", "tensorflow")
SPEC_DTYPES = ("float64", "float32")
UNCONNECTED = ("none", "zero", "error")
# Limits of train: (spec/training.py checks them; the JSON Schema states MAX_STEPS), kept here
# with the keys so that the schema needs neither the loader nor PyYAML.
MAX_STEPS = 100_000
MAX_EPOCHS = 100_000
MAX_BATCH = 10_000_000
FLOAT32_MAX = 3.4028234663852886e38  # tf.train rounds every hyper-parameter through float32

TOP = Section(
    "", ("name", "description", "backend", "dtype", "seed", "inputs", "let", "outputs", "wrt",
         "register", "override_map", "functions", "stop_gradients", "grad_ys", "unconnected",
         "data", "train", "expect", "sweep"),
    ("inputs", "outputs"),
    {"inputs": ("a spec needs inputs: the tensors it computes from and differentiates",
                "add inputs: {x: [1.0, 2.0]}"),
     "outputs": ("a spec needs at least one output", "add outputs: {y: sum(x * x)}")})
INPUT = Section("inputs.*", SOURCES + ("shape", "trainable", "dtype", "key"))
FUNCTION = Section("functions.*", ("args", "let", "forward", "gradient"),
                   ("args", "forward", "gradient"))
OVERRIDE_ENTRY = Section("override_map[]", ("op", "gradient", "scope"), ("op", "gradient"))
TRAIN = Section("train", ("loss", "optimizer", "clip", "steps", "batch_size", "epochs", "schedule",
                         "constraints", "metrics", "eval_every", "on_nonfinite"), ("optimizer",))
SCHEDULE = Section("train.schedule", tuple(SCHEDULES))
SCHEDULE_KINDS = tuple(Section(f"train.schedule.{kind}", params, params)
                       for kind, params in SCHEDULES.items())
OPTIMIZER = Section("train.optimizer",
                    ("name", *dict.fromkeys(k for h in OPTIMIZERS.values() for k in h)),
                    ("name", "lr"),
                    {"lr": ("missing the required key 'lr' (the learning rate)", None)})
CLIP = Section("train.clip", CLIP_KINDS)
DATA = Section("data", ("load", "label", "features", "labels", "test", "standardize"),
               ("load", "features", "labels"),
               {"load": ("missing the required key 'load': a .csv or .npz file beside the "
                         "spec, or {dataset: NAME}", "add load: {dataset: iris}"),
                "features": ("missing the required key 'features': the name that receives "
                             "the feature rows", "add features: X"),
                "labels": ("missing the required key 'labels': the name that receives the "
                           "labels", "add labels: y")})
DATA_LOAD = Section("data.load", ("dataset",), ("dataset",))
EXPECT = Section("expect", ("values", "gradients", "true_gradients", "train", "tolerance",
                            "finite"))
EXPECT_TRAIN = Section("expect.train", ("params", "loss", "final"))
EXPECT_FINAL_METRIC = Section("expect.train.final.*", ("train", "test"))
TOLERANCE = Section("expect.tolerance", ("rtol", "atol"))

SECTIONS = (TOP, INPUT, FUNCTION, OVERRIDE_ENTRY, TRAIN, OPTIMIZER, CLIP, SCHEDULE, *SCHEDULE_KINDS,
            EXPECT, EXPECT_TRAIN, EXPECT_FINAL_METRIC, TOLERANCE, DATA, DATA_LOAD)
