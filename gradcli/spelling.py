"""How the text outputs spell a non-finite number: `NaN`, `inf`, `-inf`, alike in every
table cell, array, note and message (the notes, captions and docs write NaN; Python and
numpy would print `nan`, so every number shown as text passes through here). JSON, CSV and
markdown keep JSON's strings ("NaN", "Infinity", "-Infinity"): render.jsonable."""
from __future__ import annotations

import math

NAN = "NaN"
KIND_TEXT = {"nan": NAN, "inf": "inf", "-inf": "-inf"}  # a non-finite record's kind, as text


def number_text(value, spec: str = "") -> str:
    """format(value, spec), NaN spelled NaN (inf and -inf as Python spells them)."""
    try:
        nan = math.isnan(value)  # Python and numpy floats of every width, ints
    except TypeError:
        nan = False
    return NAN if nan else format(value, spec)


def array_text(array, **options) -> str:
    """np.array2string(array, **options), NaN spelled NaN (numpy's padding kept)."""
    import numpy as np

    with np.printoptions(nanstr=NAN):
        return np.array2string(array, **options)
