"""What an expected number of `expect` may be written as: any number, NaN and +-inf
included (a run that ends in NaN can be expected to, as NaN against NaN agrees), but not a
quoted numeral ("6" is a string: fields.number_value refuses it at every numeric key), nor a
boolean where the value is a gradient or a parameter (never boolean; an expected value may
be, since an input or a let can be boolean). The spellings "NaN", "Infinity" and "-Infinity"
are accepted quoted: they are how gradcli's JSON writes them.

An expected value written as true/false is refused unless the value it is compared with is
boolean (numpy would read true as 1 and pass it against a float 1.0): an input's dtype is
known as the spec loads; a let's or an output's only when a run makes it, so the run checks
those (refuse_booleans) before anything else, with the same placed message.
"""
from __future__ import annotations

from gradcli.errors import SpecError
from gradcli.spec.arrays import Literal, flatten, literal
from gradcli.spec.document import Scalar, Seq, YNode
from gradcli.spec.fields import describe, fail, number_value


def expected_number(node: YNode | None, key: str) -> float:
    value = number_value(node, key, finite=False)
    if value is None:
        raise fail(node, key, f"expected a number, got {describe(node)}")
    try:
        return float(value)
    except OverflowError:
        raise fail(node, key, "the number is too large for a float") from None


def expected_array(node: YNode | None, key: str, *, booleans: bool) -> Literal:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Seq):
            stack.extend(item.items)
        elif isinstance(item, Scalar):
            if item.kind == "bool" and not booleans:
                raise fail(item, key, f"expected a number, got {describe(item)}: a gradient or "
                                      "a parameter is never boolean")
    checked = literal(node, key, None, "float64")
    if checked.dtype == "bool":
        return checked
    written = [number_value(s, key, finite=False) for s in flatten(node, key)[0]]
    if all(float(v) == v for v in written if type(v) is int):
        return checked  # float64 holds every one of them
    return Written(written, checked.shape, "object")


class Written(Literal):
    """Expected numbers as written, an integer beyond float64's exact ones (2**53) included:
    an integer value is compared with them exactly (gradcli/expected.py); a float value with
    their float64 roundings, as with any expected number."""

    __slots__ = ()

    def make(self):
        import numpy as np
        array = np.empty(len(self.values), dtype=object)
        array[:] = self.values
        return array.reshape(self.shape)


def first_boolean(node: YNode | None) -> Scalar | None:
    """The first true/false in a number or nested list, row-major; None if there is none."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Seq):
            stack.extend(reversed(item.items))
        elif isinstance(item, Scalar) and item.kind == "bool":
            return item
    return None


def refuse_booleans(booleans: dict, dtypes: dict, key: str = "expect.values") -> None:
    """A placed SpecError for the first expected value written as true/false ({name: (Location,
    how it was written)}) whose value's dtype (`dtypes`: {name: dtype name}) is not bool; a
    name without a known dtype is left for later."""
    for name, (place, written) in booleans.items():
        dtype = dtypes.get(name)
        if dtype is not None and dtype != "bool":
            raise refused_boolean(place, written, f"{key}.{name}", name, dtype)


def refused_boolean(place, written: str, key: str, name: str, dtype: str) -> SpecError:
    return place.error(f"expected a number, got {written}: {name!r} is {dtype}, and true/false "
                       "are expected only of a boolean value", key=key,
                       hint="write the number, e.g. 1.0 for true")
