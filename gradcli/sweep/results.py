"""A sweep's results directory: sweep.json, runs/<id>.json, results.csv, and resuming.

    DIR/sweep.json        the spec's path and text, the swept keys, every run's params and
                          "name", the name the runs were given (after --set)
    DIR/runs/<id>.json    one per finished run: its JSON result plus "run", "params", "time"
                          (a failed run: "error" and "exit_code" instead of, or beside, it)
    DIR/results.csv       one row per finished run (columns: csv_columns)

Every file is written atomically (a temporary file renamed over it), so a run
file exists only whole: after a crash or Ctrl-C the same command finds the
finished runs and runs the others. A DIR made for another spec or grid, or
one that is not a sweep's, is refused (exit 2) and left as it is.

read_dir reads such a directory back (with the csv and json modules only, so any directory
written to this contract works) for `gradcli plot sweep` and `gradcli report DIR`; what
they average is computed by stats.py, as the sweep's own report.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GradcliError
from ..output import _umask
from ..printable import printable
from ..spec.files import NotRegular, TooLarge, read_regular

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
        if marker.exists() or marker.is_symlink():
            try:
                found = json.loads(read_text(marker))
            except (OSError, ValueError) as exc:
                raise GradcliError(f"--out {path}: cannot read its sweep.json "
                                   f"({_problem(exc)})") from None
            if not isinstance(found, dict) or found.get("format") != FORMAT:
                raise GradcliError(f"--out {path}: its sweep.json is not a gradcli sweep's")
            for part, what in (("spec_text", "a different spec"),
                               ("keys", "different swept keys"), ("runs", "a different grid"),
                               ("set", "different --set/--backend values")):
                if found.get(part) != self.identity.get(part):
                    raise GradcliError(
                        f"--out {path} holds a sweep of {what}; resuming there "
                        "would mix two sweeps: use another --out DIR (or delete that one)")
        elif path.exists() and any(path.iterdir()):
            raise GradcliError(f"--out {path} is not empty and holds no sweep.json: it is not a "
                               "sweep's directory; give a new or empty DIR")
        if self.runs_dir.is_symlink() or (self.runs_dir.exists() and not self.runs_dir.is_dir()):
            # run files are written only inside DIR: never through a link planted as runs
            raise GradcliError(f"--out {path}: its runs is " + (
                "a symlink" if self.runs_dir.is_symlink() else "not a directory")
                + "; a sweep's runs/ must be a directory inside DIR")
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
                doc = json.loads(read_text(file))
            except (OSError, ValueError):
                continue  # unreadable, too large or not a regular file: run it again
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
            # mkstemp makes 0600: give the mode open() would (the umask's), as --output does,
            # so that others can read a shared results folder where the umask lets them
            os.fchmod(out.fileno(), 0o666 & ~_umask())  # (output.py's one reading of it)
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


# ----- reading a results directory back (plot sweep, report DIR) -----
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
        """The runs with a result, the ones a mean is over (as stats.report's n): a failed
        run that kept its result (an unmet expect, a training stopped on a non-finite loss)
        counts; one without (an error) is left out and counted apart."""
        return [r for r in self.rows if r.get("run") not in self.failed
                or any(str(r.get(c, "")).strip() for c in self.columns)]

    def values(self, key: str) -> list:
        """The distinct values of a swept key, numbers sorted, other values as first seen."""
        seen = list(dict.fromkeys(r.get(key, "") for r in self.rows))
        return sorted(seen, key=float) if all(is_number(v) for v in seen) else seen


def is_number(text) -> bool:
    try:
        return math.isfinite(float(text))
    except (TypeError, ValueError):
        return False


def cell_number(text) -> float | None:
    """A cell as a float ("inf", "NaN" read as such); None for an empty cell (the run has no
    such value), NaN for an unreadable one (a value, but not a finite number)."""
    if text is None or not str(text).strip():
        return None
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def read_text(path: Path) -> str:
    """A file of a sweep directory as text: a regular file (opened non-blocking, so a FIFO
    never waits), at most MAX_FILE_BYTES read (a link to /dev/zero ends there). Raises
    OSError (NotRegular, TooLarge, ...) or UnicodeDecodeError; every reader goes through it."""
    return read_regular(path, MAX_FILE_BYTES).decode("utf-8")


def _problem(exc: Exception) -> str:
    if isinstance(exc, NotRegular):
        return f"it is {exc.kind}, not a regular file"
    if isinstance(exc, TooLarge):
        return (f"it is larger than {MAX_FILE_BYTES // 2**20} MiB" if MAX_FILE_BYTES % 2**20 == 0
                else f"it is larger than {MAX_FILE_BYTES:,} bytes")
    return str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)


def _read(path: Path, what: str, missing: str) -> str:
    try:
        return read_text(path)
    except FileNotFoundError:
        raise GradcliError(f"{printable(path.parent)}: {missing}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GradcliError(f"{printable(path)}: cannot read {what}: {_problem(exc)}") from None


def read_dir(path) -> SweepDir:
    """The sweep directory at path, or a GradcliError (exit 2) saying what is missing."""
    path = Path(path)
    if not path.is_dir():
        raise GradcliError(f"{printable(path)} is not a sweep directory" + (
            "" if path.exists() else ": it does not exist"))
    try:
        meta = json.loads(_read(path / "sweep.json", "sweep.json", "not a sweep directory: it has "
                                "no sweep.json (`gradcli sweep SPEC --out DIR` writes one)"))
    except json.JSONDecodeError as exc:
        raise GradcliError(f"{printable(path / 'sweep.json')}: not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise GradcliError(f"{printable(path / 'sweep.json')}: expected a JSON object")
    text = _read(path / "results.csv", "results.csv", "has no results.csv: "
                 "no run of this sweep has been recorded yet")
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    if "run" not in header:
        raise GradcliError(f"{printable(path / 'results.csv')}: no `run` column in its header")
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
    """The spec's name: sweep.json's "name" (gradcli sweep writes the name its runs were
    given, --set applied). A directory written before it did: the last `--set name=X` of the
    sweep (its "set", which every run was loaded with), else the name: line of the spec's
    text, else (no name: line) its file's stem, as a run names it (audit11 P2: the directory's
    name)."""
    if isinstance(meta.get("name"), str) and meta["name"]:
        return meta["name"]
    import yaml
    sets = meta.get("set")
    named = [s.partition("=")[2] for s in sets if isinstance(s, str)
             and s.partition("=")[1] and s.partition("=")[0].strip() == "name"] \
        if isinstance(sets, list) else []
    if named and len(named[-1]) < 1000:
        try:
            name = yaml.safe_load(named[-1])  # as spec/overrides.py reads a --set value
        except yaml.YAMLError:
            name = None
        if isinstance(name, str) and name:
            return name
    # only the top-level name: line is parsed, never the whole text (aliases could explode it)
    line = re.search(r"^name:[ \t]*(\S.*)$", spec_text, re.MULTILINE)
    try:
        name = yaml.safe_load(line.group(1)) if line and len(line.group(1)) < 1000 else None
    except yaml.YAMLError:
        name = None
    if isinstance(name, str) and name:
        return name
    spec = meta.get("spec")  # gradcli sweep's: the spec's path, beside its text
    if isinstance(spec, str) and spec and "\n" not in spec and "spec_text" in meta:
        return "spec" if spec.startswith("<") else Path(spec).stem  # as spec/build.py names it
    return path.resolve().name or "sweep"


def run_doc(path: Path, run: str) -> dict | None:
    """runs/<run>.json as a dict, or None when it is missing or unreadable."""
    if not run or "/" in run or "\\" in run or run.startswith("."):
        return None  # a run id is a file name in runs/, never a path elsewhere
    file = path / "runs" / f"{run}.json"
    try:
        doc = json.loads(read_text(file))
    except (OSError, ValueError):  # missing, too large, not a regular file, not JSON
        return None
    return doc if isinstance(doc, dict) else None


def _run_failed(path: Path, run: str) -> bool:
    doc = run_doc(path, run) if (path / "runs").is_dir() else None
    return bool(doc and doc.get("error"))


# ----- groups: every swept key but seed, as the sweep's report groups them -----
def group_keys(sweep: SweepDir) -> list:
    return [k for k in sweep.keys if k != "seed"]


def groups(sweep: SweepDir) -> list:
    """[(params, [row, ...])] over the runs with a result (ok_rows), in the grid's order."""
    found: dict = {}
    for row in sweep.ok_rows():
        params = tuple((k, row.get(k, "")) for k in group_keys(sweep))
        found.setdefault(params, []).append(row)
    return [(dict(p), rows) for p, rows in found.items()]
