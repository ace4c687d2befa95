"""The error types gradcli raises; only the CLI turns them into exit codes."""
from __future__ import annotations


class GradcliError(Exception):
    """Base of every error gradcli reports to a person (exit code 2)."""

    exit_code = 2


class GraphError(GradcliError):
    """A tensor or op was used in a way the graph cannot support."""


class GradientError(GradcliError):
    """A gradient rule is missing, malformed or returned the wrong thing."""

    def __init__(self, message: str, *, gradient: str | None = None) -> None:
        super().__init__(message)
        self.gradient = gradient  # the named gradient at fault, for an error placed at it


class RegistryError(GradcliError):
    """A gradient name was registered twice or is unknown."""


class UnconnectedGradientError(GradientError):
    """A requested gradient has no path to the outputs under unconnected='error'."""


class SpecError(GradcliError):
    """A spec file is invalid; the message names file, line, column and key path."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None, key: str | None = None,
                 source_line: str | None = None, hint: str | None = None) -> None:
        self.bare_message = message
        self.path, self.line, self.column, self.key = path, line, column, key
        self.source_line, self.hint = source_line, hint
        super().__init__(self.render())

    def render(self) -> str:
        where = ":".join(str(p) for p in (self.path, self.line, self.column) if p is not None)
        head = f"{where}: " if where else ""
        key = f"{self.key}: " if self.key else ""
        text = f"{head}{key}{self.bare_message}"
        if self.hint:
            text += f" ({self.hint})"
        if self.source_line is not None and self.column is not None:
            line, caret = source_window(self.source_line, self.column)
            text += f"\n    {line}\n    {' ' * (caret - 1)}^"
        return text


WINDOW = 60  # characters shown each side of the column on a long source line


def source_window(line: str, column: int) -> tuple[str, int]:
    """The part of a long line around `column` (1-based), with … where it was cut, and the
    caret's column in it: a minified 800 KB line must not be echoed whole."""
    if len(line) <= 2 * WINDOW + 1:
        return line, column
    start = max(0, min(column - 1, len(line)) - WINDOW)
    end = min(len(line), column + WINDOW)
    head = "…" if start > 0 else ""
    return head + line[start:end] + ("…" if end < len(line) else ""), column - start + len(head)


class BackendUnavailable(GradcliError):
    """A backend's framework is not installed."""


class ExpectationFailed(GradcliError):
    """An expect block or a comparison tolerance was not met (exit code 1)."""

    exit_code = 1


def did_you_mean(name: str, candidates, *, prefer=(), alias: str | None = None) -> str | None:
    """'did you mean X?' for the closest candidate, or None when nothing is close.

    A case-only difference wins, then `alias` (our name for `name` in another library:
    max for reduce_max). Among difflib's close matches, the fewest edits wins, counting a swap of two
    neighbours as one (`sgin` is one edit from `sign`, as from `sin`); a tie goes to a name in
    `prefer` (used in the spec), then to the one sharing more letters (`sgn`: sign, not sin)."""
    candidates = [c for c in candidates if isinstance(c, str)]
    lowered = {c.lower(): c for c in candidates}
    if name.lower() in lowered and lowered[name.lower()] != name:
        return f"did you mean {lowered[name.lower()]!r}?"
    if alias in candidates:
        return f"did you mean {alias!r}?"
    import difflib  # only when an error needs a hint

    close = difflib.get_close_matches(name, candidates, n=len(candidates), cutoff=0.6)
    if not close:
        return None
    from collections import Counter

    typed = Counter(name)
    best = min(close, key=lambda c: (_edits(name, c), c not in prefer,
                                     -sum((typed & Counter(c)).values()), close.index(c)))
    return f"did you mean {best!r}?"


def _edits(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours turning a into b (the
    optimal string alignment distance)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1,
                         rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]
