"""A sweep's results directory: sweep.json, runs/<id>.json, results.csv, and resuming.

    DIR/sweep.json        the spec's path and text, the swept keys and every run's params
    DIR/runs/<id>.json    one per finished run: its JSON result plus "run", "params", "time"
                          (a failed run: "error" and "exit_code" instead of, or beside, it)
    DIR/results.csv       one row per finished run (columns: csv_columns)

Every file is written atomically (a temporary file renamed over it), so a run
file exists only whole: after a crash or Ctrl-C the same command finds the
finished runs and runs the others. A DIR made for another spec or grid, or
one that is not a sweep's, is refused (exit 2) and left as it is.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path

from ..errors import GradcliError

FORMAT = "gradcli-sweep-1"
GRADIENT_COLUMNS = ("cosine", "max_abs_diff", "sign_agreement")


class ResultsDir:
    """DIR, checked against (or made for) one sweep."""

    def __init__(self, path, identity: dict) -> None:
        self.path = Path(path)
        self.identity = {"format": FORMAT, **identity}
        self.runs_dir = self.path / "runs"

    def open(self) -> None:
        """Make DIR for this sweep, or check that it already is this sweep's."""
        path, marker = self.path, self.path / "sweep.json"
        if path.exists() and not path.is_dir():
            raise GradcliError(f"--out {path}: it is not a directory")
        if marker.exists():
            try:
                found = json.loads(marker.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise GradcliError(f"--out {path}: cannot read its sweep.json ({exc})") from None
            if not isinstance(found, dict) or found.get("format") != FORMAT:
                raise GradcliError(f"--out {path}: its sweep.json is not a gradcli sweep's")
            for part, what in (("spec_text", "spec"), ("keys", "swept keys"), ("runs", "grid")):
                if found.get(part) != self.identity[part]:
                    raise GradcliError(
                        f"--out {path} holds a sweep of a different {what}; resuming there "
                        "would mix two sweeps: use another --out DIR (or delete that one)")
        elif path.exists() and any(path.iterdir()):
            raise GradcliError(f"--out {path} is not empty and holds no sweep.json: it is not a "
                               "sweep's directory; give a new or empty DIR")
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GradcliError(f"--out {path}: cannot create it ({exc.strerror or exc})") from None
        if not marker.exists():
            write_atomic(marker, json.dumps(self.identity, indent=2, allow_nan=False) + "\n")

    def finished(self) -> dict:
        """{run id: document} of the runs already written for this grid."""
        ids = {run["run"] for run in self.identity["runs"]}
        found = {}
        for file in self.runs_dir.glob("*.json"):
            if file.stem not in ids:
                continue
            try:
                doc = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # unreadable: run it again
            if isinstance(doc, dict) and doc.get("run") == file.stem:
                found[file.stem] = doc
        return found

    def write_run(self, run_id: str, text: str) -> None:
        """runs/<id>.json: the JSON text the run's worker made (written as it is)."""
        write_atomic(self.runs_dir / f"{run_id}.json", text)

    def write_csv(self, docs: list, keys) -> None:
        write_atomic(self.path / "results.csv", csv_text(docs, keys))


def write_atomic(path: Path, text: str) -> None:
    """path holds text whole or not at all (a temporary file in its folder, renamed)."""
    temp = None
    try:
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException as exc:
        if temp is not None and os.path.exists(temp):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise GradcliError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


# ----- results.csv -----
def final_loss(doc: dict):
    train = doc.get("train")
    if not isinstance(train, dict):
        return None
    final = train.get("final")
    if isinstance(final, dict) and "loss" in final:
        return final["loss"]
    return train.get("final_loss")


def final_metrics(doc: dict) -> dict:
    """{metric: {"train": v, "test": v}} from the run's train.final (spec-v2), {} without."""
    train = doc.get("train")
    final = train.get("final") if isinstance(train, dict) else None
    if not isinstance(final, dict):
        return {}
    return {m: v for m, v in final.items() if m != "loss" and isinstance(v, dict)}


def pairs(docs: list) -> list[tuple[str, str]]:
    """Every (output, input) pair some run has a summary for, in first-seen order."""
    seen: dict = {}
    for doc in docs:
        for out, row in (doc.get("summary") or {}).items():
            for name in row:
                seen[(out, name)] = None
    return list(seen)


def metric_columns(docs: list) -> list[str]:
    seen: dict = {}
    for doc in docs:
        for metric, parts in final_metrics(doc).items():
            for part in ("train", "test"):
                if part in parts:
                    seen[f"final.{metric}.{part}"] = None
    return list(seen)


def numeric_columns(docs: list) -> list[str]:
    """The columns of numbers (those a report averages), in results.csv's order."""
    columns = ["final_loss"] if any(final_loss(d) is not None for d in docs) else []
    columns += metric_columns(docs)
    columns += [f"{o}/{i}.{c}" for o, i in pairs(docs) for c in GRADIENT_COLUMNS]
    return columns


def value(doc: dict, column: str):
    """One numeric column of a run (None when the run lacks it)."""
    if column == "final_loss":
        return final_loss(doc)
    if column.startswith("final.") and "/" not in column:
        _, rest = column.split(".", 1)
        metric, part = rest.rsplit(".", 1)
        return final_metrics(doc).get(metric, {}).get(part)
    pair, stat = column.rsplit(".", 1)
    out, name = pair.split("/", 1)
    return ((doc.get("summary") or {}).get(out) or {}).get(name, {}).get(stat)


def csv_columns(docs: list, keys) -> list[str]:
    return ["run", *keys, *numeric_columns(docs), "error"]


def csv_text(docs: list, keys) -> str:
    """results.csv: one row per run in id order; params as written (JSON for lists)."""
    columns = csv_columns(docs, keys)
    numbers = numeric_columns(docs)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for doc in sorted(docs, key=lambda d: d["run"]):
        params = doc.get("params", {})
        writer.writerow([doc["run"], *(_cell(params.get(k)) for k in keys),
                         *(_cell(value(doc, c)) for c in numbers), doc.get("error") or ""])
    return buffer.getvalue()


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else {"nan": "NaN", "inf": "Infinity"}.get(
            str(v), "-Infinity")
    if isinstance(v, (str, int)):
        return str(v)
    return json.dumps(v)
