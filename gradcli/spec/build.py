"""Assemble an Experiment from a spec's node tree: the top-level keys and the order of checks.

Every name is collected first, so a clash or a reference to something defined
later is explained as such rather than as an unknown name.
"""
from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

from gradcli.lang.ast import Call, walk
from gradcli.lang.checks import Scope
from gradcli.spec.arrays import FLOAT_DTYPES, Arrays, literal
from gradcli.spec.booleans import refuse_boolean_arithmetic, refuse_boolean_reductions
from gradcli.spec.document import Map, YNode, to_plain
from gradcli.spec.dtypes import (
    refuse_float_numbers,
    refuse_mixed_dtypes,
    refuse_non_floats,
    visit,
)
from gradcli.spec.expect import build_expect
from gradcli.spec.fields import (
    check_keys,
    expect_choice,
    expect_int,
    expect_map,
    expect_names,
    expect_str,
    fail,
    optional,
    sub,
)
from gradcli.spec.gradexpr import Upstream
from gradcli.spec.gradients import build_functions, build_override_map, build_register
from gradcli.spec.inputs import InputBuilder
from gradcli.spec.model import Experiment, InputSpec, LetSpec, OutputSpec
from gradcli.spec.names import Names
from gradcli.spec.sections import BACKENDS, SPEC_DTYPES, TOP, UNCONNECTED  # noqa: F401 - BACKENDS: also read here
from gradcli.spec.sites import check_at, parse_at

MAX_SEED = 2**64 - 1  # a uint64, as numpy keeps seeds; past it a seed only costs (printing it)

TOP_KEYS = TOP.keys


def build_experiment(root: Map, path: str) -> Experiment:
    """Validate every section of `root` and return the Experiment it describes."""
    check_keys(root, "", TOP)
    default_name = "spec" if path.startswith("<") else Path(path).stem
    name = _optional(root, "name", lambda n: expect_str(n, "name"), default_name)
    description = _optional(root, "description", lambda n: expect_str(n, "description"), "")
    backend = _optional(root, "backend", lambda n: expect_choice(n, "backend", BACKENDS), "numpy")
    dtype = _optional(root, "dtype", lambda n: expect_choice(n, "dtype", SPEC_DTYPES), "float64")
    seed = _optional(root, "seed", lambda n: expect_int(n, "seed", minimum=0, maximum=MAX_SEED), 0)
    sections = {key: _section(root, key) for key in ("inputs", "let", "outputs", "functions",
                                                     "register", "grad_ys")}
    if sections["outputs"] is None or not sections["outputs"].items:
        raise fail(root.items["outputs"][0] if "outputs" in root.items else root, "outputs",
                   "a spec needs at least one output", "add outputs: {y: sum(x * x)}")

    names = Names()
    let_names: list[tuple[str, ...]] = []
    kinds = {"inputs": "input", "functions": "function", "outputs": "output"}
    for section in root.items:  # in file order, so a clash is reported at the later name
        if section == "let":
            let_names = _let_names(sections["let"], names)
        elif section == "data":  # its features/labels are inputs
            from gradcli.spec.data import declare_names  # data: and sweep: read only when present
            declare_names(optional(root, "data"), names, root.key_mark("data"))
        elif section in kinds:
            for item, (key_node, _) in _items(sections[section]):
                names.add(item, kinds[section], key_node, sub(section, item))

    base_dir = Path.cwd() if path.startswith("<") else Path(path).parent
    builder = InputBuilder(dtype=dtype, seed=seed, base_dir=base_dir)
    inputs = {item: builder.build(item, value, sub("inputs", item), key_node.mark.location())
              for item, (key_node, value) in _items(sections["inputs"])}
    data, data_inputs = None, {}
    if "data" in root.items:
        from gradcli.spec.data import build_data
        data, data_inputs = build_data(optional(root, "data"), builder, optional(root, "train"))
    inputs.update(data_inputs)
    spec_names = names.of("input", "let", "output")
    functions = build_functions(sections["functions"], spec_names)
    callable_ = {fname: spec.args for fname, spec in functions.items()}
    upstream = Upstream(inputs)  # what each let depends on, for grad(y, x)'s checks
    lets = _lets(sections["let"], let_names, inputs, names, callable_, upstream)
    outputs = _outputs(sections["outputs"], inputs, names, callable_, upstream)
    register, register_sites = build_register(sections["register"], functions, spec_names)
    used = frozenset(n.func for spec in (*lets, *outputs) for n in walk(spec.expr.node)
                     if isinstance(n, Call))
    override_map = build_override_map(optional(root, "override_map"), names, register_sites, used)
    wrt = _wrt(optional(root, "wrt"), names, inputs, data_inputs)
    stop_gradients = _names_list(optional(root, "stop_gradients"), "stop_gradients", names)
    for key in ("wrt", "stop_gradients"):
        upstream.refuse_through(optional(root, key), key)
    grad_ys, places = {}, {}
    for out, (key_node, value) in _items(sections["grad_ys"]):
        names.require(out, key_node, sub("grad_ys", out), ("output",), "an output")
        grad_ys[out] = literal(value, sub("grad_ys", out), dtype, dtype)
        places[sub("grad_ys", out)] = value.mark.location()
    unconnected = _optional(root, "unconnected",
                            lambda n: expect_choice(n, "unconnected", UNCONNECTED), "none")
    train = None
    if optional(root, "train") is not None:  # the train builder only for a spec that trains
        from gradcli.spec.training import build_train
        train = build_train(optional(root, "train"), [o.name for o in outputs], inputs,
                            root.key_mark("train").location(), names=names, functions=callable_,
                            has_data=optional(root, "data") is not None)
    expect = build_expect(optional(root, "expect"), names, wrt, train, inputs)
    if "sweep" in root.items:  # checked here too, so `gradcli check` reports it
        from gradcli.spec.sweep import build_sweep
        build_sweep(optional(root, "sweep"))
    experiment = Experiment(name=name, description=description, path=path, backend=backend,
                            dtype=dtype, seed=seed, inputs=inputs, lets=lets, outputs=outputs,
                            wrt=wrt, register=register, override_map=override_map,
                            functions=functions, stop_gradients=stop_gradients,
                            grad_ys=Arrays(grad_ys), unconnected=unconnected, train=train,
                            expect=expect, raw=to_plain(root), places=places, data=data)
    # needs every name's dtype: after the whole spec
    visit(experiment, refuse_boolean_reductions, refuse_mixed_dtypes, refuse_non_floats,
          refuse_boolean_arithmetic, refuse_float_numbers)
    return experiment


def _optional(root: Map, key: str, read, default):
    node = optional(root, key)
    return default if node is None else read(node)


def _section(root: Map, key: str) -> Map | None:
    """A mapping section, None when absent or null."""
    node = optional(root, key)
    return None if node is None else expect_map(node, key, f"a mapping of names under {key}")


def _items(node: Map | None):
    return node.items.items() if node is not None else ()


def _let_names(node: Map | None, names: Names) -> list[tuple[str, ...]]:
    """The names each let binds: 'zeroed, index' unpacks a multi-output op."""
    out = []
    for text, (key_node, _) in _items(node):
        parts = tuple(part.strip() for part in text.split(","))
        key = sub("let", text)
        if any(not part for part in parts):
            raise fail(key_node, key, f"{text!r} has an empty name",
                       "separate several names with commas: \"a, b\"")
        for part in parts:
            names.add(part, "let", key_node, key)
        out.append(parts)
    return out


def _lets(node: Map | None, let_names, inputs: dict[str, InputSpec], names: Names,
          callable_: dict, upstream: Upstream) -> tuple[LetSpec, ...]:
    # Each let sees a view over one shared index of positions, never a copy of what came
    # before it: copying made loading quadratic in the number of lets.
    position = dict.fromkeys(inputs, -1)
    for i, bound in enumerate(let_names):
        position.update(dict.fromkeys(bound, i))
    outputs = frozenset(names.of("output"))
    lets = []
    for i, ((text, (_, value)), bound) in enumerate(zip(_items(node), let_names)):
        site = parse_at(value, sub("let", text))
        scope = Scope(_Earlier(position, i), callable_,
                      elsewhere=_OutOfReach(position, i, bound, outputs), grads=True)
        check_at(site, scope, len(bound))
        upstream.check(site)
        upstream.add(bound, site.expr.node)
        lets.append(LetSpec(bound, site.expr))
    return tuple(lets)


class _Earlier(AbstractSet):
    """The names let number `index` may use: inputs and earlier lets (a view, not a copy)."""

    def __init__(self, position: dict[str, int], index: int) -> None:
        self.position, self.index = position, index

    def __contains__(self, name) -> bool:
        return self.position.get(name, self.index) < self.index

    def __iter__(self):
        return (n for n, i in self.position.items() if i < self.index)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @classmethod
    def _from_iterable(cls, iterable):  # what `view | other` builds: a plain set
        return set(iterable)


class _OutOfReach(Mapping):
    """Why a known name is not usable in let number `index`, computed when asked."""

    def __init__(self, position: dict[str, int], index: int, bound, outputs) -> None:
        self.position, self.index, self.bound, self.outputs = position, index, bound, outputs

    def __getitem__(self, name: str) -> str:
        if name in self.bound:
            return f"{name!r} is defined by this let itself"
        if name in self.outputs:
            return f"{name!r} is an output; a let may only use inputs and earlier lets"
        if self.position.get(name, -1) > self.index:
            return (f"{name!r} is defined later in let; a let may only use inputs and earlier "
                    "lets")
        raise KeyError(name)

    def __iter__(self):
        return (n for n in [*self.position, *self.outputs] if n in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _outputs(node: Map, inputs: dict[str, InputSpec], names: Names,
             callable_: dict, upstream: Upstream) -> tuple[OutputSpec, ...]:
    visible = frozenset(inputs) | frozenset(names.of("let"))
    others = {n: f"{n!r} is an output; outputs may use inputs and lets, not other outputs "
                 "(compute it under let)" for n in names.of("output")}
    outputs = []
    for name, (_, value) in node.items.items():
        site = parse_at(value, sub("outputs", name))
        check_at(site, Scope(visible, callable_, elsewhere=others, grads=True))
        upstream.check(site)
        outputs.append(OutputSpec(name, site.expr))
    return tuple(outputs)


def _names_list(node: YNode | None, key: str, names: Names) -> tuple[str, ...]:
    """Names of inputs, lets or outputs, each at most once."""
    if node is None:
        return ()
    out: list[str] = []
    for name, name_node in expect_names(node, key):
        names.require(name, name_node, key, ("input", "let", "output"), "an input, let or output")
        if name in out:
            raise fail(name_node, key, f"{name!r} is listed twice")
        out.append(name)
    return tuple(out)


def _wrt(node: YNode | None, names: Names, inputs: dict[str, InputSpec],
         data_inputs=()) -> tuple[str, ...]:
    """What gradients are taken with respect to: by default every trainable input."""
    if node is None:
        return tuple(n for n, spec in inputs.items() if spec.trainable)
    wrt = _names_list(node, "wrt", names)
    for name, name_node in expect_names(node, "wrt"):
        spec = inputs.get(name)
        if spec is not None and spec.dtype not in FLOAT_DTYPES:
            raise fail(name_node, "wrt", f"input {name!r} is {spec.dtype}, so it has no "
                                         "gradient")
        if spec is not None and not spec.trainable:
            raise fail(name_node, "wrt", f"input {name!r} is not trainable, so it has no "
                                         "gradient", "data's features and labels never are"
                       if name in data_inputs else "remove 'trainable: false' from it")
    return wrt

