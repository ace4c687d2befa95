"""Read `expect.train.final`: the values training should end with, shaped as the JSON's
`train.final` ({loss: 0.21, accuracy: {train: 0.97, test: 0.94}}).

Each is checked within `expect.tolerance`, as every other expected number.
"""
from __future__ import annotations

from gradcli.spec.document import YNode
from gradcli.spec.expect_numbers import expected_number
from gradcli.spec.fields import check_keys, did_you_mean, expect_map, fail, sub
from gradcli.spec.sections import EXPECT_FINAL_METRIC


def expected_final(node: YNode | None, key: str, metrics) -> dict[str, float]:
    """{"loss": v, "<metric>.train": v, "<metric>.test": v} for the entries written."""
    if node is None:
        return {}
    block = expect_map(node, key, "a mapping {loss: number, <metric>: {train: number, "
                                  "test: number}}")
    final: dict[str, float] = {}
    for name, (key_node, value) in block.items.items():
        nkey = sub(key, name)
        if name == "loss":
            final["loss"] = expected_number(value, nkey)
            continue
        if name not in metrics:
            known = ["loss", *metrics]
            raise fail(key_node, nkey, f"{name!r} is neither loss nor a metric of "
                                       f"train.metrics ({', '.join(metrics) or 'none'})",
                       did_you_mean(name, known))
        parts = expect_map(value, nkey, "a mapping {train: number, test: number} (the metric "
                                        "on the training and the test part)")
        check_keys(parts, nkey, EXPECT_FINAL_METRIC)
        for part, (_, number) in parts.items.items():
            final[f"{name}.{part}"] = expected_number(number, sub(nkey, part))
    return final
