"""A plain table, byte for byte what rich prints for `Table(show_header=True)` off a terminal.

`gradcli list` on a pipe or into a file needs no colour and no wrapping, and importing rich
costs about 20 ms of a start-up budget of about 20 ms (issue 14). So when the output is certain
to be what rich would print (see `plain_ok`), the table is drawn here; otherwise the caller
renders it with rich as before. tests/cli/test_cli_imports.py compares the two.
"""
from __future__ import annotations

import os
import sys

# rich's box.HEAVY_HEAD, the default box of rich.table.Table
_TOP = ("┏", "━", "┳", "┓")
_HEAD = ("┃", "┃", "┃")
_HEAD_RULE = ("┡", "━", "╇", "┩")
_ROW = ("│", "│", "│")
_BOTTOM = ("└", "─", "┴", "┘")

# What makes rich's Console decide for itself (colour, width, a terminal): then rich renders.
_RICH_ENVIRON = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES",
                 "JUPYTER_COLUMNS", "JUPYTER_LINES")


def plain_ok(stream) -> bool:
    """True when rich would print to stream without ANSI codes, in UTF-8, at the CLI's
    unbounded width (cli_common.UNBOUNDED_WIDTH): not a terminal, nothing in the environment
    that changes rich's mind."""
    if any(name in os.environ for name in _RICH_ENVIRON):
        return False
    if "idlelib" in getattr(sys.stdin, "__module__", ""):
        return False
    try:
        if stream.isatty():
            return False
    except (AttributeError, ValueError):
        return False
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower()
    return encoding.startswith("utf")


def _simple(cell: str) -> bool:
    """One line of printable ASCII: one terminal cell per character, no markup, no tab."""
    return all(" " <= c <= "~" for c in cell)


def plain_line(line: str, width: int) -> bool:
    """True when rich prints this line as it is: short, printable ASCII, single spaces inside
    (rich would wrap a long line, and may drop spaces where it wraps)."""
    return (_simple(line) and len(line) < width and line == line.strip()
            and "  " not in line)


def table_text(headers: list[str], rows: list[list[str]], width: int) -> str | None:
    """The table as rich draws it at this console width, or None when rich would have to
    wrap or measure something (a cell wider than the width allows, a character that is not
    printable ASCII): the caller then uses rich."""
    cells = [headers, *rows]
    if not rows or not all(_simple(c) for row in cells for c in row):
        return None
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    if sum(w + 3 for w in widths) + 1 >= width:  # rich would shrink a column: let it
        return None

    def rule(left, line, mid, right):
        return left + mid.join(line * (w + 2) for w in widths) + right

    def line(row, edges):
        left, mid, right = edges
        return left + mid.join(f" {c.ljust(w)} " for c, w in zip(row, widths)) + right

    out = [rule(*_TOP), line(headers, _HEAD), rule(*_HEAD_RULE)]
    out += [line(row, _ROW) for row in rows]
    out.append(rule(*_BOTTOM))
    return "\n".join(out) + "\n"
