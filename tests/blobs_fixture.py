"""The two_blobs training spec that the end-to-end tests of run, plot, report and sweep train:
a logistic regression with an accuracy metric over experiments/data/two_blobs.csv."""
from __future__ import annotations

from pathlib import Path

CSV = Path(__file__).resolve().parents[1] / "experiments" / "data" / "two_blobs.csv"
SPEC = """name: blobs-train
seed: {seed}
data:
  load: {csv}
  features: X
  labels: y
  test: 0.2
  standardize: true
inputs:
  w: [0.5, -0.25]
  b: 0.1
let:
  z: matmul(X, w) + b
outputs:
  loss: mean(softplus(z) - cast(y, dtype(z)) * z)
train:
  loss: loss
  optimizer: {{name: sgd, lr: 0.5}}
  batch_size: 10
  epochs: 4
  metrics:
    accuracy: mean(cast(cast(z > 0, dtype(y)) == y, dtype(z)))
"""


def blobs_spec(directory: Path, seed: int = 0, name: str = "blobs.yaml", extra: str = "") -> Path:
    """Write the spec (with `extra` appended, e.g. a sweep: block) and the csv beside it, as
    load: is relative to the spec."""
    (directory / CSV.name).write_bytes(CSV.read_bytes())
    path = directory / name
    path.write_text(SPEC.format(seed=seed, csv=CSV.name) + extra)
    return path
