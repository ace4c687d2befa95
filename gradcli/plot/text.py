"""The words of a figure the user may replace for a paper: title, subtitle, axis labels,
legend title and the names of the lines (`--title`, `--subtitle`, `--xlabel`, `--ylabel`,
`--legend-title`, `--label OLD=NEW` of the plot commands).

None keeps gradcli's own text (the spec's name, the dotted keys); an empty string removes
that text. One --ylabel per axes, top to bottom. Renames apply to a line's name (a --hue
value, a run's label), never to the counts and notes gradcli adds beside it (`n=5`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import GradcliError
from ..printable import printable


@dataclass(slots=True)
class FigureText:
    """What the user asked a figure to say instead of gradcli's own words."""
    title: str | None = None
    subtitle: str | None = None
    xlabel: str | None = None
    ylabels: tuple = ()
    legend_title: str | None = None
    names: dict = field(default_factory=dict)   # a line's name -> the name drawn
    labels: tuple = ()   # --label OLD=NEW as given: split by check_names, which knows the lines

    def name(self, label) -> str:
        return self.names.get(str(label), str(label))

    def ylabel(self, i: int, default: str) -> str:
        return self.ylabels[i] if i < len(self.ylabels) else default

    def check_axes(self, count: int, what: str) -> None:
        """An error when more --ylabel are given than the figure has axes."""
        if len(self.ylabels) > count:
            raise GradcliError(f"--ylabel given {len(self.ylabels)} times, but the figure has "
                               f"{count} axes ({what}): give one per axes, top to bottom")

    def check_names(self, known: list, what: str) -> None:
        """Each --label OLD=NEW split at the '=' that leaves a line's name on the left (a
        name may hold '=': `reverse_gradient(h, scale=1.0)`; the longest such name when
        several do), into names; an error naming a --label OLD that is no line of the figure
        (split at the first '=', with the choices)."""
        from ..spec.fields import did_you_mean
        for item in self.labels:
            cuts = [i for i, c in enumerate(item) if c == "=" and item[:i] in known]
            at = cuts[-1] if cuts else item.index("=")
            self.names[item[:at]] = item[at + 1:]
        for old in self.names:
            if old not in known:
                hint = did_you_mean(old, known)
                raise GradcliError(f"--label {printable(old)!r}=...: no line is named so"
                                   + (f" ({hint})" if hint else "")
                                   + f"; the {what} are {', '.join(map(printable, known))}")


def parse_labels(items) -> tuple:
    """The --label OLD=NEW options, each checked to hold an '=' after a name; where to split
    one is decided by FigureText.check_names, which knows the figure's lines."""
    for item in items or ():
        old, sep, _ = item.partition("=")
        if not sep or not old:
            raise GradcliError(f"--label {printable(item)!r}: expected OLD=NEW, e.g. "
                               "--label identity='straight-through'")
    return tuple(items or ())


def title(fig, default: str, text: FigureText | None) -> None:
    """The figure's bold title: the user's, none for '', else gradcli's (the spec's name)."""
    shown = default if text is None or text.title is None else text.title
    if shown:
        fig.suptitle(printable(shown), fontweight="bold")
