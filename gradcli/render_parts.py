"""What a run's output shows, as plain data: one source for rich and for the plain renderer.

render.py builds these parts from a Result; `to_rich` turns a part into the rich renderable
it always was, and render_plain.part_text draws the same part without rich where the output
is certain to be rich's (off a terminal): importing and running rich's console costs `gradcli
run` about 30 ms of a start-up budget of about 50 ms (issue 14).

A cell or a piece of text is a (text, style) pair; styles are rich's and show on a terminal only.
"""
from __future__ import annotations

from .record import record

Styled = tuple[str, str]


@record
class TablePart:
    """A rich Table: title (left, over the table), columns, rows and a caption (left, below)."""

    title: str
    columns: list   # (header, justify "left" or "right", column style)
    rows: list      # lists of Styled cells; SECTION draws a rule under the row before it
    caption: str = ""


@record
class TextPart:
    """A rich Text: pieces of text with their styles, on a base style."""

    pieces: list    # Styled
    style: str = ""


@record
class PanelPart:
    """A panel as wide as its lines (rich's Panel(Group(lines), expand=False))."""

    lines: list     # lists of Styled


SECTION = None


def rstripped(pieces: list) -> list:
    """pieces without the whitespace at the end of their joined text (rich's Text.rstrip)."""
    pieces = list(pieces)
    while pieces and not pieces[-1][0].rstrip():
        pieces.pop()
    if pieces:
        pieces[-1] = (pieces[-1][0].rstrip(), pieces[-1][1])
    return pieces


def text_of(pieces: list, style: str = ""):
    from rich.text import Text

    text = Text(style=style)
    for piece, piece_style in pieces:
        text.append(piece, style=piece_style or None)
    return text


def to_rich(part):
    """The rich renderable of a part (a rich renderable itself is passed through)."""
    if isinstance(part, TextPart):
        return text_of(part.pieces, part.style)
    if isinstance(part, PanelPart):
        from rich.console import Group
        from rich.panel import Panel

        return Panel(Group(*(text_of(line) for line in part.lines)), expand=False)
    if isinstance(part, TablePart):
        return rich_table(part)
    return part


def rich_table(part: TablePart):
    from rich.table import Table
    from rich.text import Text

    # Wide enough for its title: rich would otherwise wrap it to the columns' width.
    table = (Table(title=Text(part.title, style="table.title"), title_justify="left",
                   min_width=len(part.title) + 2) if part.title else Table(show_header=True))
    for header, justify, style in part.columns:
        table.add_column(header, justify=justify, style=style or None)
    for row in part.rows:
        if row is SECTION:
            table.add_section()
        else:  # Text: "[lo, hi]" is not markup
            table.add_row(*(Text(text, style=style or "") for text, style in row))
    if part.caption:
        table.caption = part.caption
        table.caption_justify = "left"
    return table
