"""Read a spec's YAML into a tree of located nodes.

The tree is built from PyYAML's safe event stream with an explicit stack rather
than with yaml.compose: the composer recurses (libyaml's segfaults on deeply
nested input), while this keeps every node's marks, refuses duplicate keys that
PyYAML would silently drop, and bounds nesting and alias expansion.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from gradcli.errors import SpecError
from gradcli.record import Hidden, record
from gradcli.spec.files import NotRegular, open_regular
from gradcli.spec.model import Location

MAX_FILE_BYTES = 1 << 20
MAX_NESTING = 64
MAX_NODES = 2_000_000  # after alias expansion: a "billion laughs" file stops here

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_Y = "tag:yaml.org,2002:"
# Called directly: construct_object would keep every node in a cache for good.
_BUILD = {"null": lambda node: None, "bool": _CONSTRUCTOR.construct_yaml_bool,
          "int": _CONSTRUCTOR.construct_yaml_int, "float": _CONSTRUCTOR.construct_yaml_float}
_MAX_DIGITS = 4_300  # Python's limit for int(text) (sys.get_int_max_str_digits)
_FAST_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")       # what YAML 1.1 reads as that int
_FAST_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*\Z")         # ... and as that float
_KINDS = {_Y + "null": "null", _Y + "bool": "bool", _Y + "int": "int", _Y + "float": "float",
          _Y + "str": "str"}


@record
class Source:
    """A text nodes come from: the spec file, or one --set value."""

    path: str
    text: str = Hidden()
    from_set: bool = False
    set_key: str = ""
    creates: str = ""     # a mapping a dotted --set/sweep key created (overrides._creating)
    created_by: str = ""  # that key


@record
class Mark:
    """Where a node starts: character index, and 1-based line and column."""

    source: Source
    index: int
    line: int
    column: int

    def location(self) -> Location:
        """The Location of this mark (a --set value has line 0 and its own text)."""
        if self.source.from_set:
            return Location(f"{self.source.path} {self.source.set_key}", 0, self.index + 1,
                            self.source.text)
        text = self.source.text
        start = text.rfind("\n", 0, self.index) + 1
        end = text.find("\n", self.index)
        line = text[start:end if end >= 0 else len(text)].rstrip("\r")
        return Location(self.source.path, self.line, self.column, line)


@record
class Scalar:
    """A YAML scalar: its resolved value, its text as written (unquoted) and its span."""

    value: object      # None, bool, int, float or str
    text: str
    kind: str          # null, bool, int, float, str or other (a date: kept as its text)
    style: str | None  # None for plain, or one of ' " | >
    mark: Mark
    end: int


@record
class Seq:
    """A YAML sequence."""

    items: tuple
    mark: Mark
    size: int


@record
class Map:
    """A YAML mapping from key text to (key scalar, value node), in file order."""

    items: dict
    mark: Mark
    size: int

    def key_mark(self, key: str) -> Mark:
        return self.items[key][0].mark

    def get(self, key: str):
        entry = self.items.get(key)
        return None if entry is None else entry[1]


YNode = Scalar | Seq | Map


def _maker(cls):
    """cls(*every field, in order) without the record's checking constructor, which was most of
    compose()'s time (15 us a node): the builder below always passes every field. The node
    gets the same fields, in the same order, as the constructor would set."""
    fields, new = cls._fields, object.__new__

    def make(*values):
        node = new(cls)
        node.__dict__.update(zip(fields, values))
        return node
    return make


_MARK, _SCALAR, _SEQ, _MAP = _maker(Mark), _maker(Scalar), _maker(Seq), _maker(Map)


def read_file(path: str | Path) -> str:
    """The text of a spec file, refusing missing, oversized and non-UTF-8 files."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise SpecError(f"the spec file {str(path)!r} is {size} bytes; the limit is "
                                f"{MAX_FILE_BYTES} (1 MiB)")
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SpecError(f"the spec file {str(path)!r} does not exist") from None
    except NotRegular as exc:
        raise SpecError(f"{str(path)!r} is not a file: it is {exc.kind}") from None
    except OSError as exc:
        raise SpecError(f"cannot read the spec file {str(path)!r}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SpecError(f"the spec file is not valid UTF-8 (byte {exc.start} is "
                        f"0x{data[exc.start]:02x})", path=str(path), line=line) from None


def compose(source: Source) -> YNode | None:
    """The node tree of the one YAML document in `source`; None when it has none."""
    if len(source.text) > MAX_FILE_BYTES:
        raise _error(source, f"the text is {len(source.text)} characters; the limit is "
                             f"{MAX_FILE_BYTES}", 0, 0, 0)
    try:
        return _Builder(source).run()
    except yaml.YAMLError as exc:
        raise _yaml_error(source, exc) from None
    except (UnicodeError, ValueError) as exc:
        # Lone surrogates and the like, which libyaml cannot even encode.
        raise _error(source, f"the text cannot be read as YAML: {exc}", 0, 0, 0) from None


def to_plain(node: YNode | None) -> object:
    """The node as plain Python data (dicts, lists, scalars)."""
    if node is None:
        return None
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Seq):
        return [to_plain(item) for item in node.items]
    return {key: to_plain(value) for key, (_, value) in node.items.items()}


def _error(source: Source, message: str, index: int, line: int, column: int,
           hint: str | None = None) -> SpecError:
    """A SpecError at a position of `source` (line 0: the position is unknown)."""
    if source.from_set:
        return SpecError(message, key=f"{source.path} {source.set_key}", hint=hint)
    if not line:
        return SpecError(message, path=source.path, hint=hint)
    loc = Mark(source, index, line, column).location()
    return SpecError(message, path=source.path, line=line, column=column,
                     source_line=loc.source_line, hint=hint)


def _yaml_error(source: Source, exc: yaml.YAMLError) -> SpecError:
    """PyYAML's complaint, at PyYAML's line and column."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    if "maximum nesting depth" in problem:  # libyaml >= 0.2.5 scans ahead past our own bound
        message = f"the YAML nests more than {MAX_NESTING} levels deep"
    if mark is None and hasattr(exc, "position"):  # a ReaderError: a character YAML forbids
        index = exc.position
        line = source.text.count("\n", 0, index) + 1
        column = index - source.text.rfind("\n", 0, index)
        char = chr(exc.character) if isinstance(exc.character, int) else exc.character
        return _error(source, f"invalid YAML: the character {char!r} is not allowed",
                      index, line, column)
    if mark is None:
        return _error(source, message, 0, 0, 0)
    opened = getattr(exc, "context_mark", None)
    if (context or "").startswith("while parsing a flow") and opened is not None \
            and opened.line < mark.line and not source.from_set:
        # An unclosed [ or { is found only on a later line: point at the opening instead.
        message = (f"invalid YAML: {problem} (the {context[len('while parsing a '):]} opened "
                   f"here is not closed before line {mark.line + 1})")
        return _error(source, message, opened.index, opened.line + 1, opened.column + 1)
    return _error(source, message, mark.index, mark.line + 1, mark.column + 1)


FLOW_COMMA_HINT = "inside YAML's {...} or [...] a comma ends the value: quote the expression"


def _split(frame: list, key: Scalar) -> bool:
    """Whether a {...} mapping's keys and values are pieces of expressions its commas cut:
    `{W1: clip(W1, -1, 1), W2: clip(W2, -1, 1)}` repeats the key `-1` only because of that."""
    if not frame[1].flow_style:
        return False
    pieces = [key] + [n for pair in frame[2].values() for n in pair]
    return any(isinstance(n, Scalar) and n.style is None and n.text.count("(") != n.text.count(")")
               for n in pieces)


class _Builder:
    """Turns the event stream into nodes with an explicit stack (no recursion)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.anchors: dict[str, YNode] = {}
        self.total = 0

    def mark(self, event) -> Mark:
        m = event.start_mark
        return _MARK(self.source, m.index, m.line + 1, m.column + 1)

    def fail(self, message: str, event_or_mark, hint: str | None = None) -> SpecError:
        m = event_or_mark if isinstance(event_or_mark, Mark) else self.mark(event_or_mark)
        return _error(self.source, message, m.index, m.line, m.column, hint)

    def run(self) -> YNode | None:
        # Each frame: [kind, start event, items, anchor, pending key scalar].
        stack: list[list] = []
        root: YNode | None = None
        documents = 0
        for event in yaml.parse(self.source.text, Loader=_LOADER):
            cls = type(event)
            if cls is yaml.ScalarEvent:  # first: nearly every event of a large file is one
                node, anchor, grown = self.scalar(event), event.anchor, 1
            elif cls is yaml.SequenceStartEvent or cls is yaml.MappingStartEvent:
                if len(stack) >= MAX_NESTING:
                    raise self.fail(f"the YAML nests more than {MAX_NESTING} levels deep", event)
                self.check_collection_tag(event)
                kind = "seq" if cls is yaml.SequenceStartEvent else "map"
                stack.append([kind, event, [] if kind == "seq" else {}, event.anchor, None])
                continue
            elif cls is yaml.SequenceEndEvent or cls is yaml.MappingEndEvent:
                kind, start, items, anchor, _ = stack.pop()
                if kind == "seq":
                    node = _SEQ(tuple(items), self.mark(start),
                               1 + sum(self.size(item) for item in items))
                else:
                    node = _MAP(items, self.mark(start),
                               1 + sum(self.size(value) for _, value in items.values()))
                grown = 1
            elif cls is yaml.AliasEvent:
                if event.anchor not in self.anchors:
                    raise self.fail(f"invalid YAML: unknown alias *{event.anchor}", event)
                node, anchor = self.anchors[event.anchor], None
                grown = self.size(node)  # an alias repeats its whole subtree
            elif cls is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.fail("invalid YAML: expected a single document, found a second "
                                    "one ('---')", event)
                continue
            else:  # stream and document ends
                continue
            self.total += grown
            if self.total > MAX_NODES:
                raise self.fail(f"the YAML expands to more than {MAX_NODES} values "
                                "(through aliases?)", event)
            if anchor is not None:
                self.anchors[anchor] = node
            if not stack:
                root = node
            elif stack[-1][0] == "seq":
                stack[-1][2].append(node)
            else:
                self.add(stack[-1], node, event)
        return root

    @staticmethod
    def size(node: YNode) -> int:
        return 1 if isinstance(node, Scalar) else node.size

    def add(self, frame: list, node: YNode, event) -> None:
        """Fill in a mapping's key, or the value of its pending key."""
        items, key = frame[2], frame[4]
        if key is None:
            if not isinstance(node, Scalar):
                raise self.fail("a mapping key must be a name, not a list or a mapping",
                                node.mark)
            if node.text == "<<" and node.style is None:
                raise self.fail("YAML merge keys (<<) are not supported; write the keys out",
                                node.mark)
            if node.text in items:
                first = items[node.text][0].mark
                raise self.fail(f"duplicate key {node.text!r}: it is already defined at line "
                                f"{first.line} (YAML would silently keep the last one)",
                                node.mark, FLOW_COMMA_HINT if _split(frame, node) else None)
            frame[4] = node
        else:
            items[key.text] = (key, node)
            frame[4] = None

    def check_collection_tag(self, event) -> None:
        if event.tag not in (None, "!", _Y + "seq", _Y + "map"):
            raise self.fail(f"the YAML tag {event.tag!r} is not supported", event)

    def scalar(self, event) -> Scalar:
        tag = event.tag
        explicit = tag not in (None, "!")
        if not explicit and not event.style and event.implicit[0]:
            # Plain decimal numbers, most of a large literal: skip the resolver's regex tour.
            text = event.value
            if _FAST_FLOAT.match(text):
                return _SCALAR(float(text), text, "float", None, self.mark(event),
                              event.end_mark.index)
            if _FAST_INT.match(text):
                if len(text) > _MAX_DIGITS:  # int() would raise ValueError, unplaced
                    raise self.fail(f"this integer has {len(text.lstrip('+-')):,} digits; a "
                                    f"spec's integers have at most {_MAX_DIGITS:,}", event)
                return _SCALAR(int(text), text, "int", None, self.mark(event), event.end_mark.index)
        if not explicit:
            tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
        kind = _KINDS.get(tag)
        if kind is None:
            if explicit or tag == _Y + "binary":
                raise self.fail(f"the YAML tag {tag!r} is not supported", event)
            kind, value = "other", event.value  # e.g. an unquoted date: keep what was written
        elif kind == "str":
            value = event.value
        elif ":" in event.value:  # YAML 1.1 reads 1:30 as 90 (base 60): never what was meant
            raise self.fail(f"{event.value!r} is a YAML 1.1 base-60 number; write the number "
                            "itself, or quote it for text", event)
        else:
            try:
                value = _BUILD[kind](yaml.ScalarNode(tag, event.value))
            except (yaml.YAMLError, ValueError, OverflowError):
                raise self.fail(f"invalid YAML: {event.value!r} is not a valid {kind}",
                                event) from None
        return _SCALAR(value, event.value, kind, event.style or None, self.mark(event),
                      event.end_mark.index)
