"""One look for every figure: readable in print (grey) and on a dark or a light page.

White figure background (never transparent, so a dark page cannot swallow the
axes), the Okabe-Ito colour-blind-safe palette, and a distinct line style and
marker per series so that a grey print still tells them apart.
"""
from __future__ import annotations

import contextlib

# Okabe & Ito (2008), "Color Universal Design": safe for the common colour blindnesses.
BLACK, ORANGE, SKY, GREEN, YELLOW, BLUE, VERMILLION, PURPLE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
CYCLE = [BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK]
DASHES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]

RC = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "axes.edgecolor": "#333333",
    "axes.labelcolor": "black",
    "text.color": "black",
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.titlesize": 12,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "legend.framealpha": 0.95,
    "lines.linewidth": 1.8,
    "font.size": 10,
    "svg.fonttype": "path",   # text as outlines: the SVG needs no font installed to look right
    "svg.hashsalt": "gradcli",  # stable ids: the same figure gives the same bytes
    "pdf.fonttype": 42,
    # text as written: a `$` in a spec's name or a swept value is not mathtext, which could
    # render it differently from the spec or fail (`$\\frac{a$`, deep braces)
    "text.parse_math": False,
}


@contextlib.contextmanager
def styled(plt):
    """A context in which figures take the house style, and are drawn without numpy's
    floating-point warnings: a linear axis spanning -1.7e308 .. 1.7e308 overflows inside
    matplotlib's locators (ticker.py, scale.py) whatever values it is given, and the user
    would read `RuntimeWarning: overflow ...` with a path into site-packages on stderr
    (tryout12 2.1). Scoped to drawing a figure (np.errstate is undone on leaving), never set
    for the process; gradcli's own numbers are kept in range where they are computed."""
    import numpy as np
    with plt.rc_context(RC), np.errstate(over="ignore", invalid="ignore"):
        yield


def line_style(i: int) -> dict:
    """Colour, dash and marker of the i-th line of a figure with one line per run."""
    return {"color": CYCLE[i % len(CYCLE)], "linestyle": DASHES[i % len(DASHES)],
            "marker": MARKERS[i % len(MARKERS)]}


BAND_ALPHA = 0.10   # light enough that three overlapping bands still show each one's edges
MARKED = 25         # a line of at most this many points has a marker at each of them


def marked(points: int) -> bool:
    """Whether a line's points carry markers: each one when there are few (every marker is a
    value: a metric's evaluation points, a swept value), none on a dense line (a loss per
    step), where markers every few points would read as data points they are not."""
    return points <= MARKED
