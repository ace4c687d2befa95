"""Plain text, byte for byte what rich prints off a terminal: `list`'s table, `run`'s parts.

`gradcli list` or `run` on a pipe or into a file needs no colour, and importing rich costs
about 20-30 ms of a start-up budget of 20-50 ms (issue 14). So when the output is certain to
be what rich would print (see `plain_ok`), a part (render_parts) is drawn here; where rich would
have to measure or fold something, these functions return None and the caller renders that part
with rich as before. tests/cli/test_cli_imports.py and tests/cli/test_render_plain.py compare.
"""
from __future__ import annotations

import os
import re
import sys

from .render_parts import SECTION, PanelPart, TablePart, TextPart

# rich's box.HEAVY_HEAD, the default box of rich.table.Table
_TOP = ("┏", "━", "┳", "┓")
_HEAD = ("┃", "┃", "┃")
_HEAD_RULE = ("┡", "━", "╇", "┩")
_ROW = ("│", "│", "│")
_BOTTOM = ("└", "─", "┴", "┘")
_SECTION = ("├", "─", "┼", "┤")
# rich's box.ROUNDED, Panel's default
_PANEL = ("╭", "─", "╮", "│", "╰", "╯")
# The non-ASCII characters gradcli itself writes into tables, one terminal cell each for rich
_NARROW = frozenset("·→−‖∞")
_WORD = re.compile(r"\s*\S+\s*")  # rich._wrap's words
_EMOJI = re.compile(r":\S*?:")  # could be an emoji code (":smile:") to rich in a str


def _markup_free(text: str) -> bool:
    """A str rich would print as it is: no markup tag, no emoji code (rich reads both in a
    str header or caption, not in a Text)."""
    return "[" not in text and not _EMOJI.search(text)

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
    """One line of characters of one terminal cell each (printable ASCII or _NARROW): no
    tab, no control character, nothing rich would measure."""
    return all(" " <= c <= "~" or c in _NARROW for c in cell)


def _wrapped(text: str, width: int) -> list[str] | None:
    """text cut into lines of at most `width` cells where rich's Text.wrap cuts it (rich._wrap's
    divide_line), each without its trailing spaces; None when a word needs folding."""
    lines, start, offset = [], 0, 0
    for match in _WORD.finditer(text):
        word = match.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            return None
        elif offset and match.start():
            lines.append(text[start:match.start()].rstrip())
            start, offset = match.start(), len(word)
    lines.append(text[start:].rstrip())
    return lines


def _annotation(text: str, width: int) -> list[str] | None:
    """A table's title or caption as rich draws it: wrapped to the table, padded (justify left)."""
    if not _simple(text) or not _markup_free(text):
        return None
    lines = _wrapped(text, width)
    return None if lines is None else [line.ljust(width) for line in lines]


def plain_line(line: str, width: int) -> bool:
    """True when rich prints this line as it is: short, printable ASCII, single spaces inside
    (rich would wrap a long line, and may drop spaces where it wraps)."""
    return (_simple(line) and len(line) < width and line == line.strip()
            and "  " not in line)


def table_text(headers: list[str], rows: list[list[str]], width: int) -> str | None:
    """`list`'s table (plain cells, no title) as rich draws it at this console width, or None."""
    columns = [(header, "left", "") for header in headers]
    return part_text(TablePart("", columns, [[(c, "") for c in row] for row in rows]), width)


def part_text(part, width: int) -> str | None:
    """A part (render_parts) as rich prints it at this console width, or None when rich would
    have to wrap a cell, fold a word or measure a character: the caller then uses rich."""
    if isinstance(part, TablePart):
        return _table(part, width)
    if isinstance(part, PanelPart):
        return _panel(part, width)
    if isinstance(part, TextPart):
        return _text(part, width)
    return None


def _table(part: TablePart, width: int) -> str | None:
    headers = [header for header, _, _ in part.columns]
    rows = [row for row in part.rows if row is not SECTION]
    if not rows or not all(_simple(h) and _markup_free(h) for h in headers):
        return None
    cells = [headers, *([text for text, _ in row] for row in rows)]
    if not all(_simple(c) for row in cells for c in row):
        return None
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    total = sum(w + 3 for w in widths) + 1
    if total >= width:  # rich would shrink a column: let it
        return None
    if part.title and total < len(part.title) + 2:  # rich would widen the columns (min_width)
        return None
    justify = [str.rjust if j == "right" else str.ljust for _, j, _ in part.columns]

    def rule(left, line, mid, right):
        return left + mid.join(line * (w + 2) for w in widths) + right

    def line(row, edges):
        left, mid, right = edges
        return left + mid.join(f" {fit(c, w)} " for c, w, fit in zip(row, widths, justify)) + right

    title = _annotation(part.title, total) if part.title else []
    caption = _annotation(part.caption, total) if part.caption else []
    if title is None or caption is None:
        return None
    out = [*title, rule(*_TOP), line(headers, _HEAD), rule(*_HEAD_RULE)]
    drawn, ruled = 0, False
    for row in part.rows:  # rich draws a section's rule only between rows
        if row is SECTION:
            ruled = drawn > 0
            continue
        if ruled:
            out.append(rule(*_SECTION))
        out.append(line([text for text, _ in row], _ROW))
        drawn, ruled = drawn + 1, False
    out.append(rule(*_BOTTOM))
    return "\n".join(out + caption) + "\n"


def _panel(part: PanelPart, width: int) -> str | None:
    """Panel(Group(lines), expand=False): as wide as its widest line (at most the console's
    width less the border and padding), each line wrapped to that width."""
    texts = ["".join(text for text, _ in line) for line in part.lines]
    if not all(_simple(t) for t in texts):
        return None
    inner = min(max(len(t) for t in texts), width - 4)
    body = []
    for text in texts:
        lines = _wrapped(text, inner)
        if lines is None:
            return None
        body += [f"{_PANEL[3]} {line.ljust(inner)} {_PANEL[3]}" for line in lines]
    rule = _PANEL[1] * (inner + 2)
    return "\n".join([_PANEL[0] + rule + _PANEL[2], *body, _PANEL[4] + rule + _PANEL[5]]) + "\n"


def _text(part: TextPart, width: int) -> str | None:
    """A Text printed as it is: each of its lines short enough that rich does not wrap it."""
    text = "".join(piece for piece, _ in part.pieces)
    lines = text.split("\n")
    if not all(_simple(line) and len(line) < width for line in lines):
        return None
    return text + "\n"
