"""A sweep's results directory as `plot sweep` and `report DIR` take it: the checks of their
options (--x, --y, --hue, --output) against what the directory holds.

Reading the directory is sweep/results.py's job (read_dir) and every number averaged over
runs is sweep/stats.py's (column_stats, group_gradients), the same code as `gradcli sweep`'s
own report, so a figure, the HTML report and the JSON report cannot disagree. The names
below are re-exported for the plot and report modules.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import GradcliError
from ..printable import printable
from ..sweep.results import MAX_FILE_BYTES, SweepDir, cell_number, group_keys, groups, is_number, run_doc  # noqa: F401
from ..sweep.results import read_dir as load  # noqa: F401

number = cell_number


def fail(message: str) -> GradcliError:
    return GradcliError(message)


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


def check_key(sweep: SweepDir, key: str, option: str) -> str:
    if key not in sweep.keys:
        raise fail(_unknown(key, sweep.keys, option, "swept key", sweep))
    return key


def parse_where(sweep: SweepDir, items) -> dict:
    """{key: value} from --where KEY=VALUE options, each key a swept key and each value one it
    takes (a number matched as a number: 0.010 is 0.01), as written in results.csv."""
    where = {}
    for item in items or ():
        key, sep, wanted = item.partition("=")
        if not sep:
            raise fail(f"--where {printable(item)!r}: expected KEY=VALUE, e.g. "
                       "--where train.optimizer.lr=0.01")
        check_key(sweep, key, "--where")
        found = [v for v in sweep.values(key) if same_value(v, wanted)]
        if not found:
            raise fail(f"--where {printable(item)!r}: {printable(key)} never takes the value "
                       f"{printable(wanted)!r} in {printable(sweep.path)}; it takes "
                       + ", ".join(map(printable, sweep.values(key))))
        where[key] = found[0]
    return where


def same_value(cell: str, wanted: str) -> bool:
    if cell == wanted:
        return True
    return is_number(cell) and is_number(wanted) and float(cell) == float(wanted)


def selected(rows: list, where: dict) -> list:
    """The rows whose swept keys take the --where values."""
    return [r for r in rows if all(r.get(k) == v for k, v in where.items())]


def check_column(sweep: SweepDir, column: str, option: str) -> str:
    if column not in sweep.columns:
        raise fail(_unknown(column, sweep.columns, option, "column of results.csv", sweep))
    return column


def _unknown(name: str, choices: list, option: str, what: str, sweep: SweepDir) -> str:
    from ..spec.fields import did_you_mean
    hint = did_you_mean(name, choices)
    return (f"{option} {printable(name)!r} is not a {what} of {printable(sweep.path)}"
            + (f" ({hint})" if hint else "") + f"; choose from {', '.join(map(printable, choices))}")
