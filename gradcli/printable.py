"""Make text from a spec (names, descriptions, paths, quoted YAML) safe to show.

A spec may come from anyone. Its text reaches terminals, markdown and CSV, so
control characters in it (ESC starts sequences that retitle the window, clear
the screen or plant links; bidi overrides reorder what is read) are shown
escaped, as `\\x1b`, never sent. Rich markup is a separate concern: render
passes spec text to rich as Text objects, never as markup strings.
"""
from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators and
# bidirectional overrides that change how the rest of a line reads.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text) -> str:
    """text with every control character escaped: one line, safe for a table cell."""
    return _CONTROL.sub(_escape, str(text))


def printable_lines(text) -> str:
    """As printable, but newlines are kept: for messages laid out over lines."""
    return _CONTROL_BUT_NEWLINE.sub(_escape, str(text))
