"""Make text from a spec (names, descriptions, paths, quoted YAML) safe to show.

A spec may come from anyone. Its text reaches terminals, markdown and CSV, so
control characters in it (ESC starts sequences that retitle the window, clear
the screen or plant links; bidi overrides reorder what is read) are shown
escaped, as `\\x1b`, never sent. Rich markup is a separate concern: render
passes spec text to rich as Text objects, never as markup strings.
"""
from __future__ import annotations

# C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators and
# bidirectional overrides that change how the rest of a line reads. A str.translate table,
# not a regular expression: compiling that character class cost every command about 1.4 ms
# (5 M instructions) of start-up.
_CONTROLS = [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F),
             *range(0x2066, 0x206A)]
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_ESCAPED = {code: _NAMED.get(chr(code)) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
            for code in _CONTROLS}
_ESCAPED_BUT_NEWLINE = {**_ESCAPED}
del _ESCAPED_BUT_NEWLINE[ord("\n")]


def printable(text) -> str:
    """text with every control character escaped: one line, safe for a table cell."""
    return str(text).translate(_ESCAPED)


def printable_lines(text) -> str:
    """As printable, but newlines are kept: for messages laid out over lines."""
    return str(text).translate(_ESCAPED_BUT_NEWLINE)
