"""One rule for telling runs apart that share a label (one spec given twice, or two specs
that keep one `name:`): such runs are `name #0`, `name #1` by their place among the runs,
in every compare format and in plot train's legend and title alike."""
from __future__ import annotations


def told_apart(labels: list[str]) -> list[str]:
    """The labels, each that occurs more than once followed by ` #k`, k its run's place."""
    twice = {label for label in labels if labels.count(label) > 1}
    return [f"{label} #{k}" if label in twice else label for k, label in enumerate(labels)]
