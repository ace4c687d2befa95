"""Apply `--set dotted.key=value` overrides to the spec's node tree before validation.

The value is parsed as YAML, so `inputs.x=[1,2,3]` sets a list; its nodes keep
the --set text as their source, so an error in it is reported as `--set KEY`.
Integer path parts index lists (`expect.train.loss.0=1.5`). An override_map
key is matched as the spec's op types are (`override_map.sign` replaces `Sign:`).
"""
from __future__ import annotations

from gradcli.errors import SpecError, did_you_mean
from gradcli.ops import op_key
from gradcli.spec.document import Map, Mark, Scalar, Seq, Source, YNode, compose
from gradcli.spec.fields import fail


def apply_overrides(root: Map, overrides) -> Map:
    """`root` with every override applied in order (later ones win)."""
    for text in overrides:
        if not isinstance(text, str):
            raise SpecError(f"--set expects KEY=VALUE strings, got {type(text).__name__}")
        key, sep, value = text.partition("=")
        key = key.strip()
        parts = key.split(".")
        if not sep or not key or any(not part.strip() for part in parts):
            raise SpecError(f"--set expects KEY=VALUE with a dotted key such as "
                            f"train.steps=5, got {text!r}")
        source = Source("--set", value, from_set=True, set_key=key)
        node = compose(source)
        if node is None:  # `--set key=` sets null, as an empty YAML value would
            node = Scalar(None, "", "null", None, Mark(source, 0, 0, 1), 0)
        root = _replace(root, [p.strip() for p in parts], node, source, 0)
    return root


def _replace(node: YNode | None, parts: list[str], value: YNode, source: Source,
             depth: int, mark: Mark | None = None) -> YNode:
    """A copy of `node` with the path `parts` set to `value` (missing mappings created, at
    `mark` when given: a sweep's key, so an unknown key is reported where it was written)."""
    if not parts:
        return value
    part, rest = parts[0], parts[1:]
    here = source.set_key
    mark = mark or Mark(source, 0, 0, 1)
    if node is None:
        node = Map({}, mark, 1)
    if isinstance(node, Map):
        items = dict(node.items)
        top = source.set_key.split(".")[0].strip()
        if depth == 1 and top == "override_map":
            part = _op_key(items, part)
        if depth == 1 and top == "inputs" and part not in items:
            raise _no_such_input(part, list(items), source, mark)
        key_node, child = items.get(part, (None, None))
        if key_node is None:
            key_node = Scalar(part, part, "str", None, mark, 0)
        if child is None and rest and not mark.source.creates:
            mark = _creating(mark, ".".join(source.set_key.split(".")[:depth + 1]), here)
        items[part] = (key_node, _replace(child, rest, value, source, depth + 1, mark))
        return Map(items, node.mark, node.size)
    prefix = ".".join(source.set_key.split(".")[:depth]) or "the spec"
    if isinstance(node, Seq):
        if not part.lstrip("-").isdigit():
            raise SpecError(f"{prefix} is a list; index it with a number, not {part!r}",
                            key=f"--set {here}")
        index = int(part)
        if not -len(node.items) <= index < len(node.items):
            raise SpecError(f"{prefix} has {len(node.items)} items; there is no item {index}",
                            key=f"--set {here}")
        items = list(node.items)
        items[index] = _replace(items[index], rest, value, source, depth + 1, mark)
        return Seq(tuple(items), node.mark, node.size)
    raise SpecError(f"{prefix} is a single value, so it has no key {part!r}",
                    key=f"--set {here}")


def _no_such_input(name: str, inputs: list[str], source: Source, mark: Mark) -> SpecError:
    """A --set, --param or sweep key under inputs.NAME.… that names no input. Setting a key
    inside it would create a new (trainable) input that nothing uses: the user meant an
    existing one (`inputs.C.value` for `c`), and a sweep over it would silently change nothing."""
    key = source.set_key
    said = f"{key}={source.text}" if source.from_set else key
    message = (f"no input {name!r} in the spec ({', '.join(inputs) or 'it has none'}); {said} "
               f"would add one, but --set and sweep keys only change existing inputs")
    return fail(mark, f"inputs.{name}", message, did_you_mean(name, inputs))


def _creating(mark: Mark, block: str, key: str) -> Mark:
    """`mark` (the same place) saying that the dotted `key` creates the mapping `block` and
    those inside it: if one lacks a required key, the error says that the spec has no
    `block:` (fields.check_keys), not the first key the created mapping lacks."""
    source = mark.source
    return Mark(Source(source.path, source.text, source.from_set, source.set_key or key,
                       creates=block, created_by=key), mark.index, mark.line, mark.column)


def _op_key(items: dict, part: str) -> str:
    """The override_map key already naming op `part` (Sign for sign), else `part` itself:
    two keys for one op would be refused as an op overridden twice."""
    return next((key for key in items if op_key(key) == op_key(part)), part)


def replace_node(root: Map, key: str, value: YNode, key_mark: Mark) -> Map:
    """`root` with dotted `key` set to the node `value` as it is (a sweep's value keeps its
    place in the file); keys created on the way are placed at `key_mark`."""
    source = Source(key_mark.source.path, key_mark.source.text, set_key=key)
    return _replace(root, [p.strip() for p in key.split(".")], value, source, 0, key_mark)
