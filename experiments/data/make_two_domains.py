"""Write two_domains.csv: the two-domain toy data of experiments/gradient_reversal_domains.yaml.

    python experiments/data/make_two_domains.py      # rewrites experiments/data/two_domains.csv

Two classes (label 0/1) in two domains (column `domain`: 0 source, 1 target),
200 rows each. In both domains x1 = +-1 (by class) plus noise of std 1: a weak
cue that works everywhere. In the source domain x2 = +-1.5 (by class) plus
noise of std 0.3: a strong cue, so a classifier trained on the source alone
leans on it. In the target domain x2 is shifted by +3, so that cue says
"class 1" for every target row, and x2 alone tells the domains apart: removing
what identifies the domain (gradient reversal) removes the misleading cue.
Written with numpy's default_rng(20261123), rounded to 4 decimals.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

ROWS_PER_DOMAIN = 200
SHIFT = 3.0


def make(seed: int = 20261123) -> np.ndarray:
    """The rows [x1, x2, domain, label], source rows first."""
    rng = np.random.default_rng(seed)
    rows = []
    for domain in (0, 1):
        label = rng.integers(0, 2, ROWS_PER_DOMAIN)
        sign = 2.0 * label - 1.0
        x1 = sign + rng.normal(0.0, 1.0, ROWS_PER_DOMAIN)
        x2 = 1.5 * sign + rng.normal(0.0, 0.3, ROWS_PER_DOMAIN) + SHIFT * domain
        rows.append(np.column_stack([x1, x2, np.full(ROWS_PER_DOMAIN, domain), label]))
    return np.round(np.concatenate(rows), 4)


def main() -> None:
    out = Path(__file__).with_name("two_domains.csv")
    rows = make()
    lines = ["x1,x2,domain,label"] + [f"{a:.4f},{b:.4f},{int(d)},{int(y)}" for a, b, d, y in rows]
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
