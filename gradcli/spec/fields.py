"""Typed readers for YAML nodes: each returns a Python value or raises a located SpecError."""
from __future__ import annotations

import keyword
import math

from gradcli.errors import SpecError, did_you_mean
from gradcli.lang.tokens import NUMBER
from gradcli.spec.document import Map, Mark, Scalar, Seq, YNode
from gradcli.spec.model import Location
from gradcli.spec.sections import Section

# JSON-style spellings of non-finite numbers, as the JSON output writes them.
_NONFINITE = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf,
              "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf,
              "+infinity": math.inf, "-infinity": -math.inf}


def sub(key: str, child: str | int) -> str:
    """The key path of a child: 'inputs' + 'w' -> 'inputs.w', 'expect' + 0 -> 'expect[0]'."""
    if isinstance(child, int):
        return f"{key}[{child}]"
    return f"{key}.{child}" if key else child


def fail(at: YNode | Mark | Location | None, key: str, message: str,
         hint: str | None = None) -> SpecError:
    """A SpecError at a node (or mark, or location) for the dotted key path `key`."""
    if at is None:
        return SpecError(message, key=key, hint=hint)
    if isinstance(at, Location):
        return at.error(message, key=key, hint=hint)
    mark = at if isinstance(at, Mark) else at.mark
    return mark.location().error(message, key=key, hint=hint)


def describe(node: YNode | None) -> str:
    """How a node's type is named in 'expected X, got Y'."""
    if node is None:
        return "nothing"
    if isinstance(node, Seq):
        return "a list"
    if isinstance(node, Map):
        return "a mapping"
    value = node.value
    if node.kind == "float" and isinstance(value, float) and (value != value
                                                              or abs(value) == float("inf")):
        return f"{_short(node.text)} (not a finite number)"  # nan, inf: "a number" would confuse
    return {"null": "null", "bool": f"{str(node.value).lower()} (a boolean)",
            "int": "a number", "float": "a number"}.get(node.kind, _describe_text(node.text))


def _describe_text(text: str) -> str:
    return f"the string {_short(text)!r}"


def is_identifier(name: str) -> bool:
    """An ASCII identifier that is not a Python keyword."""
    # str.isidentifier on ASCII text is [A-Za-z_][A-Za-z0-9_]* (no regex to compile)
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


def check_keys(node: Map, key: str, section: Section, noun: str | None = None,
               named: Mark | Location | None = None) -> None:
    """Refuse keys `section` does not declare (with a did-you-mean), then report the first
    missing required key, at `named` (the key that names the block: `train:`) when given,
    else at the mapping (its first key, or its `{`).

    With a `noun` the error reads `key: unknown <noun> 'x'`; else `key.x: unknown key 'x'`.
    """
    allowed = section.keys
    for name, (key_node, _) in node.items.items():
        if name not in allowed:
            hint = did_you_mean(name, allowed) or f"expected one of {', '.join(allowed)}"
            if noun:
                raise fail(key_node, key, f"unknown {noun} {name!r}", hint)
            raise fail(key_node, sub(key, name), f"unknown key {name!r}"
                       + (f" in {key}" if key else ""), hint)
    for name in section.required:
        if name not in node.items:
            if node.mark.source.creates:  # made by a dotted key: the block itself is missing
                raise _no_block(node)
            if name in section.missing:
                message, hint = section.missing[name]
                raise fail(block_place(node, named), sub(key, name) if not key else key,
                           message, hint)
            raise fail(block_place(node, named), key, f"missing the required key {name!r}")


def block_place(node: YNode, named: Mark | Location | None) -> YNode | Mark | Location:
    """Where a problem of a whole mapping (a missing key) is shown: a block mapping starts at
    its first key, which would look like the culprit, so at the key that names it (`train:`)
    when given; a flow mapping at its `{`; at the value when --set, --param or a sweep gave
    it (the spec's key did not write it)."""
    mark = node.mark
    if named is None or mark.source.from_set or mark.source.text.startswith("{", mark.index):
        return node
    return named


def only_key(node: Map, key: str, keys: tuple[str, ...], lead: str) -> tuple[str, YNode]:
    """(name, value) of the one of `keys` that a mapping holds; other keys may stand beside it
    (check_keys refuses unknown ones). `lead` starts the error: 'clip takes', 'an input
    mapping needs'."""
    given = [name for name in keys if name in node.items]
    if len(given) != 1:
        raise fail(node, key, f"{lead} exactly one of {', '.join(keys)}; got "
                              f"{', '.join(given) or 'none'}")
    return given[0], node.items[given[0]][1]


def expect_map(node: YNode | None, key: str, what: str = "a mapping") -> Map:
    if not isinstance(node, Map):
        raise fail(node, key, f"expected {what}, got {describe(node)}")
    return node


def expect_list(node: YNode | None, key: str, what: str = "a list") -> Seq:
    if not isinstance(node, Seq):
        raise fail(node, key, f"expected {what}, got {describe(node)}")
    return node


def expect_str(node: YNode | None, key: str, what: str = "a string") -> str:
    """A string; numbers and dates are taken as written (YAML may have resolved them)."""
    if not isinstance(node, Scalar) or node.kind in ("null", "bool"):
        raise fail(node, key, f"expected {what}, got {describe(node)}")
    return node.text if node.kind != "str" else node.value


def expect_name(node: YNode | None, key: str, what: str = "a name") -> str:
    if not isinstance(node, Scalar) or node.kind != "str":
        raise fail(node, key, f"expected {what}, got {describe(node)}")
    name = node.value
    if not is_identifier(name):
        raise fail(node, key, f"{name!r} is not a valid name",
                   "names are letters, digits and '_', not starting with a digit")
    return name


def expect_names(node: YNode | None, key: str) -> list[tuple[str, Scalar]]:
    """A list of names (or one name): each with its node, for pointing at it later."""
    if isinstance(node, Scalar) and node.kind == "str":
        return [(expect_name(node, key), node)]
    seq = expect_list(node, key, "a list of names")
    return [(expect_name(item, sub(key, i)), item) for i, item in enumerate(seq.items)]


def number_value(node: YNode | None, key: str = "", *,
                 finite: bool = True) -> float | int | None:
    """The number a scalar holds (numeric strings such as 1e-3 included), else None.

    A decimal too large for a float (1e400) is refused rather than silently read
    as inf; inf and nan themselves are accepted only where `finite` is False.
    A quoted numeral ("0.1") is refused: it is a string, most likely a quoting mistake, and
    every numeric key (expect's included) reads its numbers here, so the rule is one. The
    JSON spellings "NaN", "Infinity" and "-Infinity" stay accepted quoted: they are how
    gradcli's JSON writes them.
    """
    if not isinstance(node, Scalar):
        return None
    if node.kind in ("int", "float"):
        value = node.value
    elif node.kind == "str" and _is_number_text(node.value.strip()):
        if node.style is not None:  # plain 1e-3 is a YAML 1.1 string too: only quotes count
            raise _quoted_numeral(node, key)
        text = node.value.strip()
        value = float(text) if any(c in text for c in ".eE") else int(text)
    elif node.kind == "str" and node.value.strip().lower() in _NONFINITE:
        value = _NONFINITE[node.value.strip().lower()]
    else:
        return None
    if isinstance(value, float) and math.isinf(value) and not _spells_nonfinite(node.text):
        raise fail(node, key, f"the number {_short(node.text)} is too large for a float (it "
                              "would silently become inf)", "write inf if you mean infinity")
    if isinstance(value, float) and finite and not math.isfinite(value):
        return None
    return value


def _quoted_numeral(node: Scalar, key: str) -> SpecError:
    how = "quoted" if node.style in ("'", '"') else "a block string"
    return fail(node, key, f"expected a number, got the string {_short(node.value.strip())!r} "
                           f"({how})", "write the number without quotes")


def _is_number_text(text: str) -> bool:
    """[+-]? and an unsigned number, nothing else (1e-3, -2E2, .5, +7)."""
    return NUMBER.fullmatch(text[1:] if text[:1] in ("+", "-") else text) is not None


def _spells_nonfinite(text: str) -> bool:
    """Whether the text names inf or nan itself (inf, .inf, -Infinity, NaN, ...)."""
    return text.strip().lower().lstrip("+-").lstrip(".") in ("inf", "infinity", "nan")


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def expect_number(node: YNode | None, key: str, *, minimum: float | None = None,
                  positive: bool = False, below: float | None = None) -> float:
    """A finite number, optionally > 0, >= minimum or < below."""
    value = number_value(node, key)
    if value is None:
        if number_value(node, key, finite=False) is not None:  # inf or nan: "got a number" misleads
            raise fail(node, key, f"expected a finite number, got {_short(node.text)}")
        raise fail(node, key, f"expected a number, got {describe(node)}")
    try:
        value = float(value)
    except OverflowError:
        raise fail(node, key, "the number is too large for a float") from None
    if positive and not value > 0:
        raise fail(node, key, f"expected a positive number, got {value:g}")
    if minimum is not None and value < minimum:
        raise fail(node, key, f"expected a number >= {minimum:g}, got {value:g}")
    if below is not None and not value < below:
        raise fail(node, key, f"expected a number below {below:g}, got {value:g}")
    return value


def expect_int(node: YNode | None, key: str, *, minimum: int | None = None,
               maximum: int | None = None) -> int:
    """An integer (2.0 counts; True does not) within [minimum, maximum]."""
    value = number_value(node, key)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    bounds = ("" if minimum is None and maximum is None else
              f"between {minimum} and {maximum}" if minimum is not None and maximum is not None
              else f">= {minimum}" if minimum is not None else f"<= {maximum}")
    if isinstance(value, float):  # finite (number_value): 2.5, 1e-3
        raise fail(node, key, f"{_short(node.text)} is not a whole number (expected an integer"
                              f"{' ' + bounds if bounds else ''})")
    if not isinstance(value, int):
        raise fail(node, key, f"expected an integer, got {describe(node)}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        shown = value if value.bit_length() <= 256 else f"a {value.bit_length():,}-bit integer"
        raise fail(node, key, f"expected an integer {bounds}, got {shown}")  # (str() of a huge
        # int raises ValueError past 4,300 digits)
    return value


def expect_bool(node: YNode | None, key: str) -> bool:
    if not isinstance(node, Scalar) or node.kind != "bool":
        raise fail(node, key, f"expected true or false, got {describe(node)}")
    return node.value


def expect_choice(node: YNode | None, key: str, choices) -> str:
    """One of `choices` (a string), with a did-you-mean when it is close to one."""
    if not isinstance(node, Scalar) or node.kind in ("null", "bool"):
        raise fail(node, key, f"expected one of {', '.join(choices)}, got {describe(node)}")
    value = node.text
    if value not in choices:
        raise fail(node, key, f"unknown value {value!r}; expected one of {', '.join(choices)}",
                   did_you_mean(value, choices))
    return value


def optional(node: Map, name: str) -> YNode | None:
    """The value under `name`, with an explicit null treated as absent."""
    value = node.get(name)
    return None if isinstance(value, Scalar) and value.kind == "null" else value


def _no_block(node: Map) -> SpecError:
    """A required key missing from a mapping that a --set, --param or sweep key created (the
    spec had no such block): validating it would ask for one missing key after another."""
    block, key = node.mark.source.creates, node.mark.source.created_by
    needs = (" (loss, optimizer with name and lr, steps or epochs)" if block == "train"
             else " with its required keys")
    return fail(node, key, f"the spec has no {block}: block, and this key alone would create "
                f"one: add {block}: to the spec{needs}, then set or sweep its keys")
