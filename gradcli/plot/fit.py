"""Long text made to fit its room in a figure, shortened in its middle with an ellipsis.

A spec's, run's, column's or swept value's name is the user's (untrusted) and can be 800
characters: drawn whole, a legend or label that long pushes the axes to nothing (matplotlib's
constrained layout then gives up, with a warning, and draws over itself) and a title runs
off both edges. Names are cut in the middle, so that two names that differ only at their end
stay apart; the full names stay where they break no layout (the SVG ids, the HTML report's
headings, the default file name up to what a file system takes).

Written here rather than taken from matplotlib: its Text(wrap=True) breaks lines only at
spaces and only at draw time, with no bound on the number of lines.
"""
from __future__ import annotations

ELLIPSIS = "…"


def middle(text: str, keep: int) -> str:
    """text with its middle replaced by an ellipsis so that `keep` characters are left (the
    start and the end); text no longer than that as it is."""
    if len(text) <= keep:
        return text
    keep = max(keep - 1, 2)
    head = (keep + 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (keep - head):]


def to_width(artist, width: float, renderer) -> None:
    """Shorten each line of a Text artist (middle ellipsis) until it is at most `width`
    pixels long along the text's direction (a rotated y label: its height)."""
    text = artist.get_text()
    if not _too_long(artist, width, renderer):
        return
    lines = text.split("\n")
    for i, line in enumerate(lines):  # each line measured alone, in the artist's font
        artist.set_text(line)
        if not _too_long(artist, width, renderer):
            continue
        lo, hi = 2, len(line)  # the longest keep that fits lies in [lo, hi]
        while lo < hi:
            keep = (lo + hi + 1) // 2
            artist.set_text(middle(line, keep))
            if _too_long(artist, width, renderer):
                hi = keep - 1
            else:
                lo = keep
        lines[i] = middle(line, lo)
    artist.set_text("\n".join(lines))


def _too_long(artist, width: float, renderer) -> bool:
    box = artist.get_window_extent(renderer)
    along = box.height if abs(artist.get_rotation() - 90) < 1 else box.width
    return along > width


def figure(fig, legend_share: float) -> None:
    """Fit every text of a figure that holds a name: the titles to the figure's width, the
    axis labels to their axes' side, each legend entry (and legend title) to `legend_share`
    of the figure's width."""
    renderer = fig.canvas.get_renderer()
    width = fig.bbox.width
    if fig._suptitle is not None:
        to_width(fig._suptitle, 0.96 * width, renderer)
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        to_width(ax.title, 0.84 * width, renderer)  # centred on the axes, not the figure
        to_width(ax.xaxis.label, 0.9 * width, renderer)
        to_width(ax.yaxis.label, 0.95 * box.height, renderer)
        legend = ax.get_legend()
        if legend is not None:
            for text in [*legend.get_texts(), legend.get_title()]:
                to_width(text, legend_share * width, renderer)
