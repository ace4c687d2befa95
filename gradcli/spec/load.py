"""Load a spec: read the file, compose its YAML, apply --set overrides, validate."""
from __future__ import annotations

from os import PathLike

from gradcli.errors import SpecError
from gradcli.spec.build import build_experiment
from gradcli.spec.document import Map, Source, compose, read_file
from gradcli.spec.fields import describe, fail
from gradcli.spec.model import Experiment
from gradcli.spec.opcount import MAX_OPS, count_ops


def load_spec(path: str | PathLike, overrides=(), *, max_ops: int = MAX_OPS) -> Experiment:
    """The Experiment in the spec file at `path`, with `--set KEY=VALUE` overrides applied."""
    return load_spec_text(read_file(path), path=str(path), overrides=overrides, max_ops=max_ops)


def load_spec_text(text: str, path: str = "<string>", overrides=(), *,
                   max_ops: int = MAX_OPS) -> Experiment:
    """The Experiment in YAML `text`; `path` names it in errors and anchors `load:` paths.

    A spec that would build more than `max_ops` ops is refused (see opcount).
    """
    if not isinstance(text, str):
        raise SpecError(f"a spec must be text, got {type(text).__name__}", path=path)
    if isinstance(overrides, str):
        overrides = (overrides,)  # one KEY=VALUE, not its characters
    root = compose(Source(path, text))
    if root is None:
        raise SpecError("the spec is empty: expected a mapping with at least 'outputs'", path=path)
    if not isinstance(root, Map):
        raise fail(root, "", f"a spec must be a mapping of keys such as inputs and outputs, got "
                             f"{describe(root)}")
    if overrides:  # --set, --param: their reader only when one is given
        from gradcli.spec.overrides import apply_overrides
        root = apply_overrides(root, overrides)
    experiment = build_experiment(root, path)
    count_ops(experiment, max_ops)
    return experiment
