"""The one namespace of inputs, lets, outputs and functions: unique, and never an op or dtype."""
from __future__ import annotations

from gradcli.errors import did_you_mean
from gradcli.lang.parser import CONSTANT_NAMES
from gradcli.ops import DTYPES, OPS
from gradcli.spec.document import FLOW_COMMA_HINT, Scalar
from gradcli.spec.fields import fail, is_identifier

KIND_WORDS = {"input": "an input", "let": "a let", "output": "an output", "function": "a function"}


def check_new_name(name: str, node: Scalar, key: str, what: str = "name") -> None:
    """Refuse a name that is not an identifier or that means something already."""
    if not is_identifier(name):
        cut = node.style is None and name.count("(") != name.count(")")  # by a {...}'s comma
        raise fail(node, key, f"{name!r} is not a valid {what}", FLOW_COMMA_HINT if cut else
                   "names are letters, digits and '_', not starting with a digit")
    if name in OPS:
        raise fail(node, key, f"{name!r} is an op name; pick another name")
    if name == "grad":
        raise fail(node, key, "'grad' is grad(y, x), the gradient in expressions; pick another "
                              "name")
    if name in DTYPES:
        raise fail(node, key, f"{name!r} is a dtype name; pick another name")
    if name in CONSTANT_NAMES:
        raise fail(node, key, f"{name!r} is a constant of the expression language; pick "
                              "another name")


class Names:
    """Every spec-level name, its kind and where it was defined."""

    def __init__(self) -> None:
        self.kinds: dict[str, tuple[str, Scalar]] = {}

    def add(self, name: str, kind: str, node: Scalar, key: str) -> None:
        check_new_name(name, node, key)
        if name in self.kinds:
            other, first = self.kinds[name]
            loc = first.mark.location()
            where = f"set by {loc.path}" if loc.line == 0 else f"line {loc.line}"
            raise fail(node, key, f"{name!r} is already {KIND_WORDS[other]} ({where}); names "
                                  "must be unique across inputs, let, outputs and functions")
        self.kinds[name] = (kind, node)

    def of(self, *kinds: str) -> list[str]:
        """The names of the given kinds, in definition order."""
        return [n for n, (k, _) in self.kinds.items() if k in kinds]

    def kind(self, name: str) -> str | None:
        entry = self.kinds.get(name)
        return entry[0] if entry else None

    def require(self, name: str, node: Scalar, key: str, kinds: tuple[str, ...],
                what: str) -> str:
        """`name` must be of one of `kinds`, else a did-you-mean error describing `what`."""
        if self.kind(name) in kinds:
            return name
        found = self.kind(name)
        detail = f"; {name!r} is {KIND_WORDS[found]}" if found else ""
        raise fail(node, key, f"{name!r} is not {what}{detail}",
                   did_you_mean(name, self.of(*kinds)))
