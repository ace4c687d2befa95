"""The validated experiment: plain data the runner builds graphs from (no YAML inside).

No numpy here: literal values are recipes (spec/arrays.py) until a run asks for arrays.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gradcli.errors import SpecError
from gradcli.lang.ast import Node
from gradcli.record import Factory, record

if TYPE_CHECKING:
    import numpy as np

    from gradcli.spec.arrays import Recipe


@record
class Location:
    """A place in the spec file, 1-based. Line 0 means a command-line value: `path` is then
    its flag and key (`--set let.s`), `source_line` the value, `column` the column in it."""

    path: str
    line: int
    column: int
    source_line: str

    def error(self, message: str, *, key: str, hint: str | None = None) -> SpecError:
        """A SpecError pointing here, or at `--set KEY` when the value came from --set."""
        if self.line == 0:
            return SpecError(message, key=f"{self.path.split(' ')[0]} {key}", hint=hint)
        # A huge line (a minified file) is shown as a window around the column (SpecError).
        return SpecError(message, path=self.path, line=self.line, column=self.column, key=key,
                         source_line=self.source_line, hint=hint)

    def in_value(self, column: int | None = None) -> str:
        """Where in a command-line value (which has no line) a problem is, to add to its
        message: " (at column 6 of the --set value 'sign(q)')"."""
        flag = self.path.split(" ")[0]
        return f" (at column {column or self.column} of the {flag} value {self.source_line!r})"

    def __str__(self) -> str:
        return self.path if self.line == 0 else f"{self.path}:{self.line}:{self.column}"


@record
class Expr:
    """One parsed expression, with the location of its first character."""

    text: str
    node: Node
    loc: Location


@record
class InputSpec:
    """A leaf tensor: how its value is made (checked already), and whether it trains."""

    name: str
    recipe: Recipe
    trainable: bool
    loc: Location
    loaded_from: Path | None = None  # the file a `load:` input read (--output must not be it)

    @property
    def value(self) -> np.ndarray:
        """The array, made on first use (drawn, filled or converted) and the same one after."""
        return self.recipe.array()

    @property
    def dtype(self) -> str:
        """The value's dtype name ("float32", "int64", "bool"...), without making it."""
        return self.recipe.dtype


@record
class LetSpec:
    """A named intermediate; several names unpack a multi-output op."""

    names: tuple[str, ...]
    expr: Expr


@record
class OutputSpec:
    """A result that is differentiated and gets its own gradient table."""

    name: str
    expr: Expr


@record
class OverrideEntry:
    """op type -> gradient name, for every op (scope None) or those built for `scope`."""

    op: str
    gradient: str
    scope: tuple[str, ...] | None
    loc: Location


@record
class GradientSpec:
    """A registered gradient: one expression per op input, None for no gradient."""

    name: str
    grads: tuple[Expr | None, ...]
    loc: Location


@record
class FunctionSpec:
    """A custom-gradient function: forward over `args` and one gradient per arg."""

    name: str
    args: tuple[str, ...]
    forward: Expr
    grads: tuple[Expr | None, ...]
    loc: Location
    lets: tuple[tuple[str, Expr], ...] = ()  # its own intermediates: forward and gradient see them


@record
class ClipSpec:
    """Gradient clipping: 'norm' and 'global_norm' take a bound, 'value' a (lo, hi) pair."""

    kind: str
    value: float | tuple[float, float]


@record
class ScheduleSpec:
    """A learning-rate schedule: kind 'cosine' (steps), 'step' (every, gamma) or 'exponential'
    (gamma), with its parameters by name (spec-v2's formulas)."""

    kind: str
    params: dict


@record
class DataSpec:
    """A data set fed batch by batch: the rows as loaded (split and scaled per run, with the
    run's seed), and the two input names that receive a batch."""

    features: str                # input name (and .npz key) of the feature rows, float [n, k]
    labels: str                  # input name (and .npz key) of the labels, [n]
    x: np.ndarray                # every row's features, as loaded (float64)
    y: np.ndarray                # every row's label (int64 for classes)
    test: float                  # held-out share (0: no test part)
    standardize: bool
    source: str                  # what was loaded, for the reader: a file name or "digits"
    loc: Location
    loaded_from: Path | None = None  # the file `load:` read (--output must not be it)


@record
class TrainSpec:
    """Optimizer steps on the trainable inputs; `hyper` has every default filled in.

    Without data, `steps` is the number of steps and `epochs` is None; with data,
    `epochs` passes over the training part, capped by `steps` when it is given.
    """

    loss: str
    optimizer: str
    hyper: dict
    clip: ClipSpec | None
    steps: int | None
    loc: Location
    keys: dict = Factory(dict)  # {"train.loss": Location, ...} for the keys written in the spec
    batch_size: int | None = None               # None: the whole training part in one batch
    epochs: int | None = None
    schedule: ScheduleSpec | None = None
    constraints: dict = Factory(dict)           # {variable: Expr}, applied after each step
    metrics: dict = Factory(dict)               # {metric: Expr}, on the train and test parts
    eval_every: int = 1                         # epochs (with data) or steps (without)
    on_nonfinite: str = "stop"                  # stop | error | continue


@record
class ExpectSpec:
    """Expected results; a None gradient expects an unconnected one. Each mapping of arrays is
    a spec/arrays.Arrays, which makes them on first use."""

    values: Mapping
    gradients: dict             # {output: Arrays}
    true_gradients: dict        # {output: Arrays}
    train_params: Mapping
    train_loss: list | None
    rtol: float
    atol: float
    finite: bool = False  # every value, gradient and trained parameter must be finite
    train_final: dict = Factory(dict)  # {"loss" | "<metric>.train" | "<metric>.test": value}
    # {name: (Location, how it was written)} of each expected value written as true/false whose
    # dtype is known only when a run makes it (a let's, an output's): spec/expect_numbers
    booleans: dict = Factory(dict)
    train_loss_at: Location | None = None  # where train_loss is written (for refuse_long_loss)


@record
class Experiment:
    """One validated spec: everything the runner needs, nothing it must re-parse."""

    name: str
    description: str
    path: str
    backend: str
    dtype: str
    seed: int
    inputs: dict[str, InputSpec]
    lets: tuple[LetSpec, ...]
    outputs: tuple[OutputSpec, ...]
    wrt: tuple[str, ...]
    register: dict[str, GradientSpec]
    override_map: tuple[OverrideEntry, ...]
    functions: dict[str, FunctionSpec]
    stop_gradients: tuple[str, ...]
    grad_ys: Mapping[str, np.ndarray]  # spec/arrays.Arrays: made on first use
    unconnected: str
    train: TrainSpec | None
    expect: ExpectSpec | None
    raw: dict
    places: dict[str, Location] = Factory(dict)  # "grad_ys.y" -> where its value is written
    data: DataSpec | None = None  # its features/labels are also in `inputs` (the first batch)
