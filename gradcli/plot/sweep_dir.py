"""Read a sweep's results directory (spec-v2 "Sweeps") for plots and reports: no numbers made up.

The directory is the file contract of `gradcli sweep --out DIR`: `sweep.json` (the grid
and the spec's text), `runs/<id>.json` (a run's JSON result plus "params") and
`results.csv` (one row per run); gradcli sweep's sweep.json has "spec" (the path),
"spec_text", "keys" (the swept keys) and "runs". This module reads them with the csv and json modules
only, so it works on any directory written to that contract, and groups runs by every
swept key but `seed` as the sweep's report does (mean and std with ddof 1).

A run is failed when its row has a non-empty `error` cell or its runs/<id>.json holds an
"error"; failed runs are left out of every mean and counted, never silently dropped.
"""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import GradcliError
from ..printable import printable

MAX_FILE_BYTES = 256 * 2**20  # results.csv and each runs/<id>.json: bounded, a DIR may be anyone's
RESULT_COLUMN = re.compile(r"^(run|error|final_loss|final\..+|.+/.+\.(cosine|max_abs_diff|sign_agreement))$")


@dataclass
class SweepDir:
    """What a results directory holds: name, spec text, swept keys, result columns, rows."""

    path: Path
    name: str
    spec_text: str
    keys: list            # swept keys, in results.csv's order
    columns: list         # result columns (everything but run, error and the swept keys)
    rows: list            # one dict per run: column -> cell text
    failed: set = field(default_factory=set)  # run ids with an error

    def ok_rows(self) -> list:
        return [r for r in self.rows if r.get("run") not in self.failed]

    def values(self, key: str) -> list:
        """The distinct values of a swept key, numbers sorted, other values as first seen."""
        seen = list(dict.fromkeys(r.get(key, "") for r in self.rows))
        return sorted(seen, key=float) if all(is_number(v) for v in seen) else seen


def fail(message: str) -> GradcliError:
    return GradcliError(message)


def is_number(text) -> bool:
    try:
        return math.isfinite(float(text))
    except (TypeError, ValueError):
        return False


def number(text) -> float:
    """A cell as a float: NaN for an empty or unreadable cell ("inf", "NaN" read as such)."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def _read(path: Path, what: str, missing: str) -> str:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise fail(f"{printable(path)}: {what} is larger than {MAX_FILE_BYTES // 2**20} MiB")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail(f"{printable(path.parent)}: {missing}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"{printable(path)}: cannot read {what}: {exc}") from None


def load(path) -> SweepDir:
    """The sweep directory at path, or a GradcliError (exit 2) saying what is missing."""
    path = Path(path)
    if not path.is_dir():
        raise fail(f"{printable(path)} is not a sweep directory" + (
            "" if path.exists() else ": it does not exist"))
    try:
        meta = json.loads(_read(path / "sweep.json", "sweep.json", "not a sweep directory: it has "
                                "no sweep.json (`gradcli sweep SPEC --out DIR` writes one)"))
    except json.JSONDecodeError as exc:
        raise fail(f"{printable(path / 'sweep.json')}: not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise fail(f"{printable(path / 'sweep.json')}: expected a JSON object")
    text = _read(path / "results.csv", "results.csv", "has no results.csv: "
                 "no run of this sweep has been recorded yet")
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    if "run" not in header:
        raise fail(f"{printable(path / 'results.csv')}: no `run` column in its header")
    rows = [{k: (v or "") for k, v in row.items() if k is not None} for row in reader]
    listed = meta.get("keys")  # gradcli sweep names the swept keys; else tell them by name
    if isinstance(listed, list) and listed and all(k in header for k in listed):
        keys = [c for c in header if c in listed]
    else:
        keys = [c for c in header if not RESULT_COLUMN.match(c)]
    columns = [c for c in header if c not in keys and c not in ("run", "error")]
    failed = {r["run"] for r in rows if r.get("error", "").strip()}
    failed |= {r["run"] for r in rows if _run_failed(path, r["run"])}
    spec_text = next((meta[k] for k in ("spec_text", "text", "spec")  # "spec" may be its path
                      if isinstance(meta.get(k), str) and "\n" in meta[k]), "")
    return SweepDir(path, _name(meta, spec_text, path), spec_text, keys, columns, rows, failed)


def _name(meta: dict, spec_text: str, path: Path) -> str:
    """The spec's name: sweep.json's "name", else the name: line of the spec's text."""
    if isinstance(meta.get("name"), str) and meta["name"]:
        return meta["name"]
    import yaml
    # only the top-level name: line is parsed, never the whole text (aliases could explode it)
    line = re.search(r"^name:[ \t]*(\S.*)$", spec_text, re.MULTILINE)
    try:
        name = yaml.safe_load(line.group(1)) if line and len(line.group(1)) < 1000 else None
    except yaml.YAMLError:
        name = None
    if isinstance(name, str) and name:
        return name
    return path.resolve().name or "sweep"


def refuse_own_files(output: str | None, directories) -> None:
    """An OutputError when --output is (by inode) a sweep's sweep.json or results.csv,
    checked before anything is drawn: a figure must never replace the data it shows."""
    import os

    from ..output import OutputError
    if not output or not os.path.exists(output):
        return
    for directory in directories:
        for name in ("sweep.json", "results.csv"):
            own = Path(directory) / name
            if own.exists() and os.path.samestat(os.stat(output), os.stat(own)):
                raise OutputError(f"--output '{printable(output)}': is the {name} of the sweep "
                                  f"{printable(directory)}; pick another file")


def run_doc(path: Path, run: str) -> dict | None:
    """runs/<run>.json as a dict, or None when it is missing or unreadable."""
    if not run or "/" in run or "\\" in run or run.startswith("."):
        return None  # a run id is a file name in runs/, never a path elsewhere
    file = path / "runs" / f"{run}.json"
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return None
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _run_failed(path: Path, run: str) -> bool:
    doc = run_doc(path, run) if (path / "runs").is_dir() else None
    return bool(doc and doc.get("error"))


def check_key(sweep: SweepDir, key: str, option: str) -> str:
    if key not in sweep.keys:
        raise fail(_unknown(key, sweep.keys, option, "swept key", sweep))
    return key


def check_column(sweep: SweepDir, column: str, option: str) -> str:
    if column not in sweep.columns:
        raise fail(_unknown(column, sweep.columns, option, "column of results.csv", sweep))
    return column


def _unknown(name: str, choices: list, option: str, what: str, sweep: SweepDir) -> str:
    from ..spec.fields import did_you_mean
    hint = did_you_mean(name, choices)
    return (f"{option} {printable(name)!r} is not a {what} of {printable(sweep.path)}"
            + (f" ({hint})" if hint else "") + f"; choose from {', '.join(map(printable, choices))}")


# ----- groups: every swept key but seed, as the sweep's report groups them -----
def group_keys(sweep: SweepDir) -> list:
    return [k for k in sweep.keys if k != "seed"]


def groups(sweep: SweepDir) -> list:
    """[(params, [row, ...])] over the runs without an error, in the grid's order."""
    found: dict = {}
    for row in sweep.ok_rows():
        params = tuple((k, row.get(k, "")) for k in group_keys(sweep))
        found.setdefault(params, []).append(row)
    return [(dict(p), rows) for p, rows in found.items()]


def mean_std(values) -> tuple[float, float, int]:
    """(mean, std with ddof 1, n) of the finite values; std NaN for fewer than two."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else math.nan, int(v.size)


def column_stats(rows: list, columns: list) -> dict:
    """{column: (mean, std, n)} over the rows."""
    return {c: mean_std([number(r.get(c)) for r in rows]) for c in columns}


def gradient_stats(sweep: SweepDir, rows: list) -> dict:
    """{output: {input: {grad_mean_norm, grad_std, bias, cosine_of_means, n}}} of the runs'
    overridden (g_r) and true (t_r) gradients, read from runs/<id>.json (spec-v2)."""
    found: dict = {}
    for row in rows:
        doc = run_doc(sweep.path, row.get("run", "")) or {}
        grads = doc.get("gradients")
        for out, per_input in (grads.items() if isinstance(grads, dict) else ()):
            for name, g in (per_input.items() if isinstance(per_input, dict) else ()):
                pair = _pair(g)
                if pair is not None:
                    found.setdefault(out, {}).setdefault(name, []).append(pair)
    return {out: {name: _stats(pairs) for name, pairs in per.items()} for out, per in found.items()}


def _pair(g) -> tuple | None:
    if not isinstance(g, dict) or g.get("overridden") is None or g.get("true") is None:
        return None
    try:
        over = np.ravel(np.asarray(_floats(g["overridden"]), dtype=np.float64))
        true = np.ravel(np.asarray(_floats(g["true"]), dtype=np.float64))
    except (TypeError, ValueError):
        return None
    return (over, true) if over.shape == true.shape else None


def _floats(value):
    """JSON numbers with "NaN", "Infinity", "-Infinity" (how gradcli writes them) as floats."""
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return float(value) if isinstance(value, (str, int, float)) else value


def _stats(pairs: list) -> dict:
    shapes = {p[0].shape for p in pairs}
    if len(shapes) != 1:  # a swept shape: the runs' gradients cannot be averaged element-wise
        return {"grad_mean_norm": math.nan, "grad_std": math.nan, "bias": math.nan,
                "cosine_of_means": math.nan, "n": len(pairs)}
    g = np.stack([p[0] for p in pairs])
    t = np.stack([p[1] for p in pairs])
    g_bar, t_bar = g.mean(axis=0), t.mean(axis=0)
    with np.errstate(all="ignore"):
        ng, nt = float(np.linalg.norm(g_bar)), float(np.linalg.norm(t_bar))
        # as gradcli sweep's report (and a run's own cosine): 1 when both are zero, 0 when one is
        cosine = (float(np.clip(np.dot(g_bar, t_bar) / (ng * nt), -1.0, 1.0)) if ng and nt
                  else float(ng == nt))
        return {"grad_mean_norm": float(np.linalg.norm(g_bar)),
                "grad_std": float(np.sqrt(np.mean(np.sum((g - g_bar) ** 2, axis=1)))),
                "bias": float(np.linalg.norm(g_bar - t_bar)), "cosine_of_means": cosine,
                "n": len(pairs)}
