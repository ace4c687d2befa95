"""One rule for telling runs apart that share a label (one spec given twice, or two specs
that keep one `name:`): such runs are `name #0`, `name #1` by their place among the runs,
in every compare format and in plot train's legend and title alike."""
from __future__ import annotations


def told_apart(labels: list[str]) -> list[str]:
    """The labels, each that occurs more than once followed by ` #k`, k its run's place."""
    twice = {label for label in labels if labels.count(label) > 1}
    return [f"{label} #{k}" if label in twice else label for k, label in enumerate(labels)]


def run_labels(spec_names: list[str], backends: tuple[str, ...] | list[str]) -> list[str]:
    """Each compare run's label, in the order compare runs them (spec by spec, then backend by
    backend), as its columns and its failed-run errors name it: without backends the specs'
    names told apart; across backends the backend, or `spec [backend]` with several specs."""
    specs = told_apart(list(spec_names))
    if not backends:
        return specs
    if len(specs) == 1:
        return list(backends)
    return [f"{spec} [{b}]" for spec in specs for b in backends]
