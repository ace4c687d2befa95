"""Figures from plain data: the curve figure and training curves (matplotlib, an extra).

matplotlib is imported only here and only when a figure is drawn, so gradcli
starts (and runs specs) without it; a missing one is a clear error, exit 2.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import GradcliError

FORMATS = (".png", ".svg", ".pdf")
HINT = "pip install 'gradcli[plot]'"
NAME_BYTES = 200    # of a default file name's spec name, leaving room for -<kind>.png
PNG_DPI = 150
NO_DATE = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}  # the same figure, the same bytes


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or an error with the pip hint."""
    try:
        import matplotlib
    except ImportError:
        raise GradcliError(f"plots need matplotlib, which is not installed: {HINT}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def check_format(path) -> str:
    """The file type from the extension: .png, .svg or .pdf (checked before any work)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise GradcliError(f"cannot tell the figure's file type from {str(path)!r}: "
                           f"name it .png, .svg or .pdf")
    return suffix[1:]


def figure_target(output: str | None, name: str, kind: str, specs) -> tuple[Path, str, str]:
    """(path, file type, name as given) of a figure to write, checked before any work is done."""
    from ..output import prepare
    shown = output or figure_name(name, kind)
    fmt = check_format(shown)
    pyplot()  # a missing matplotlib fails here, with the pip hint, before the spec runs
    return prepare(shown, specs), fmt, shown


def figure_name(name: str, kind: str) -> str:
    """`<spec name>-<kind>.png`, with only safe characters (a spec's name is untrusted), the
    name cut to 200 bytes: a file name holds at most 255 (an 800-character name failed)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip(".-") or "gradcli"
    safe = safe.encode()[:NAME_BYTES].decode(errors="ignore")  # a whole character at the cut
    return f"{safe}-{kind}.png"


def figure_bytes(fig, fmt: str) -> bytes:
    """The figure rendered to png, svg or pdf bytes (in the house style), and closed."""
    import io

    from .style import styled
    buffer, plt = io.BytesIO(), pyplot()
    try:
        with styled(plt):  # savefig reads rc settings too (svg ids, facecolor)
            if fmt == "png":
                # a layout at the saved dpi before the saving one: an axis label's place is
                # kept in pixels from the last draw (at 100 dpi), so the one draw at 150 laid
                # the axes out around a label that then moved, off the figure's left edge
                fig.set_dpi(PNG_DPI)
                fig.draw_without_rendering()
            fig.savefig(buffer, format=fmt, dpi=PNG_DPI if fmt == "png" else "figure",
                        metadata=NO_DATE.get(fmt))
    finally:
        plt.close(fig)
    return buffer.getvalue()
