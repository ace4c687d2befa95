"""A failed sweep run's kind: written once, as the field "failure" of its run file and digest,
where the run ends (sweep/execute.py), and read back by the report, which says "4 failed
expect" rather than "4 failed" for runs that kept their results.

A run file written before the field existed (resuming, or `report DIR`, on a directory made
by an older gradcli) carries only its error text: its kind is then read from how that text
begins, as the older version worded it.
"""
from __future__ import annotations

EXPECT, STOPPED, ERROR = "expect", "stopped", "error"  # an unmet expect, a non-finite stop, none
KINDS = (ERROR, EXPECT, STOPPED)

# How the error text of a run that kept its result begins (the older record's only clue)
_LEGACY_PREFIXES = (("expect: ", EXPECT), ("training stopped at step ", STOPPED))


def failure_kind(doc: dict) -> str | None:
    """A run record's failure kind (None for a run that did not fail): its "failure" field,
    else, for a record older than the field, the kind its error text says."""
    if not doc.get("error"):
        return None
    kind = doc.get("failure")
    if kind in KINDS:
        return kind
    text = str(doc["error"])
    return next((k for prefix, k in _LEGACY_PREFIXES if text.startswith(prefix)), ERROR)
