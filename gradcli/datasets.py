"""The data sets' vocabulary and limits, without numpy: the spec's JSON Schema and checks read
them here; gradcli/data.py, which loads the rows (with numpy), re-exports them."""
from __future__ import annotations

DATASETS = ("digits", "iris", "wine", "breast_cancer")  # sklearn.datasets.load_<name>
PIP_HINT = "pip install 'gradcli[data]'"
MAX_CELLS = 10_000_000  # rows x (features + label) of one data set
MAX_CSV_BYTES = 128 << 20
