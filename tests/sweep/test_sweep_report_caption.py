"""The HTML report's group table is wider than the page and scrolls: its caption must not be
centred over the whole table width (at 1200 px only "groups: mean ± std (ddo" showed). The
caption is left-aligned, and inside a scrolling box it is sticky at the box's left edge and
no wider than the window, so it wraps and stays in view (checked by eye in headless
Chromium at 1200 and 600 px; here the rules the browser applies)."""
import re

from gradcli import report


def _rules(page: str) -> dict:
    css = page.split("<style>")[1].split("</style>")[0]
    return {sel.strip(): body for sel, body in re.findall(r"([^{}]+)\{([^}]*)\}", css)}


def test_captions_are_left_aligned_and_a_scrolling_tables_stays_in_view():
    rules = _rules(report.page([], version="test"))
    assert "text-align: left" in rules["caption"]
    wide = rules[".wide caption"]
    assert "position: sticky" in wide and "left: 0" in wide and "max-width" in wide
