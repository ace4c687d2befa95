"""Static warnings about a valid spec: things that parse but silently do nothing.

The CLI prints them and turns them into errors under --strict.
"""
from __future__ import annotations

from gradcli.lang.ast import Call, Name, Node, walk
from gradcli.ops import parts
from gradcli.record import record
from gradcli.spec.lint_discrete import cut_overrides
from gradcli.spec.lint_discrete import message as cut_message
from gradcli.spec.model import Experiment, Expr, Location


@record
class LintWarning:
    """One static warning, rendered as `path:line:col: key: message`."""

    message: str
    loc: Location
    key: str

    def __str__(self) -> str:
        if self.loc.line == 0:
            return f"--set {self.key}: {self.message}"
        return f"{self.loc.path}:{self.loc.line}:{self.loc.column}: {self.key}: {self.message}"


def lint(experiment: Experiment) -> list[LintWarning]:
    """Every warning for `experiment`, in the order of the sections they concern."""
    return [*_overrides_matching_nothing(experiment), *_overrides_cut(experiment),
            *_unused_gradients(experiment),
            *_uncalled_functions(experiment), *_unconnected_wrt(experiment)]


def _expressions(experiment: Experiment) -> dict[str, Expr]:
    """Each let or output name -> the expression that computes it."""
    out = {}
    for let in experiment.lets:
        for name in let.names:
            out[name] = let.expr
    for output in experiment.outputs:
        out[output.name] = output.expr
    return out


def _ops_built(node: Node, experiment: Experiment) -> tuple[set[str], dict[str, set[str]]]:
    """(the op types an expression builds outside function forwards, {op type: the functions
    whose forward builds it}): an override of an op inside a function's forward never runs,
    the function's own gradient replaces that op's (as tf.custom_gradient's does)."""
    ops: set[str] = set()
    inside: dict[str, set[str]] = {}
    pending, entered = [(node, None)], set()
    while pending:
        tree, owner = pending.pop()
        for current in walk(tree):
            if not isinstance(current, Call):
                continue
            function = experiment.functions.get(current.func)
            if function is None:
                for op in parts(current.func):  # a composite's parts, not its own name
                    if owner is None:
                        ops.add(op)
                    else:
                        inside.setdefault(op, set()).add(owner)
            elif current.func not in entered:
                entered.add(current.func)
                pending.append((function.forward.node, current.func))
                pending.extend((let.node, current.func) for _, let in function.lets)
    return ops, inside


def _overrides_matching_nothing(experiment: Experiment) -> list[LintWarning]:
    return [warning for _, warning in _unmatched(experiment)]


def unmatched_at_run(experiment: Experiment, entries) -> list[str]:
    """A run's warnings for override entries that matched no op, but for those the lint
    already reported at their place in the file: one warning per entry, with its place."""
    seen = {i for i, _ in _unmatched(experiment)}
    listed = [e for i, e in enumerate(experiment.override_map) if i in seen]
    return [f"override_map entry {e.op!r} -> {e.gradient!r} matched no op"
            for e in entries if e not in listed]


def _unmatched(experiment: Experiment) -> list[tuple[int, LintWarning]]:
    """(index, warning) of each override entry whose op no expression builds."""
    expressions = _expressions(experiment)
    warnings = []
    for i, entry in enumerate(experiment.override_map):
        where = "" if entry.scope is None else f" while computing {', '.join(entry.scope)}"
        built, inside = set(), {}
        for name in entry.scope or expressions:
            if name in expressions:
                ops, functions = _ops_built(expressions[name].node, experiment)
                built |= ops
                for op, owners in functions.items():
                    inside.setdefault(op, set()).update(owners)
        if entry.op not in built:
            key = _override_key(experiment, i, entry)
            why = (f"no {entry.op} op is built{where} (the most common silent no-op of "
                   "gradient_override_map)")
            if entry.op in inside:
                owners = ", ".join(sorted(inside[entry.op]))
                why = (f"its {entry.op} ops{where} are all inside the forward of function "
                       f"{owners}, whose own gradient replaces theirs (as tf.custom_gradient's "
                       "does), so it never runs")
            if parts(entry.op) != (entry.op,):
                why = (f"{entry.op} is built from other ops, as in TensorFlow "
                       f"({', '.join(dict.fromkeys(parts(entry.op)))}), and has no op of its own")
            warnings.append((i, LintWarning(
                f"override_map entry {entry.op!r} -> {entry.gradient!r} matches no op: {why}",
                entry.loc, key)))
    return warnings


def _override_key(experiment: Experiment, i: int, entry) -> str:
    listed = isinstance(experiment.raw.get("override_map"), list)
    return f"override_map[{i}]" if listed else f"override_map.{entry.op}"


def _overrides_cut(experiment: Experiment) -> list[LintWarning]:
    """Entries that match ops on a boolean/integer path, where no gradient ever flows."""
    return [LintWarning(cut_message(entry, reason), entry.loc, _override_key(experiment, i, entry))
            for i, entry, reason in cut_overrides(experiment)]


def _swept_gradients(experiment: Experiment) -> set:
    """Gradient names a `sweep:` block gives override_map keys: the runs use them."""
    block = experiment.raw.get("sweep")
    if not isinstance(block, dict):
        return set()
    columns = list(block.items()) + (list(block["zip"].items())
                                     if isinstance(block.get("zip"), dict) else [])
    return {v for key, values in columns if isinstance(key, str)
            and key.split(".")[0].strip() == "override_map" and isinstance(values, list)
            for v in values if isinstance(v, str)}


def _unused_gradients(experiment: Experiment) -> list[LintWarning]:
    used = {entry.gradient for entry in experiment.override_map} | _swept_gradients(experiment)
    return [LintWarning(f"registered gradient {name!r} is used by no override_map entry, so it "
                        "never runs", spec.loc, f"register.{name}")
            for name, spec in experiment.register.items() if name not in used]


def _uncalled_functions(experiment: Experiment) -> list[LintWarning]:
    exprs = [*_expressions(experiment).values()]
    for function in experiment.functions.values():
        exprs += [function.forward, *(g for g in function.grads if g is not None),
                  *(let for _, let in function.lets)]
    for gradient in experiment.register.values():
        exprs += [g for g in gradient.grads if g is not None]
    called = {node.func for expr in exprs for node in walk(expr.node) if isinstance(node, Call)}
    return [LintWarning(f"function {name!r} is never called", spec.loc, f"functions.{name}")
            for name, spec in experiment.functions.items() if name not in called]


def _unconnected_wrt(experiment: Experiment) -> list[LintWarning]:
    """wrt names no output reaches, not walking past stop_gradients.

    A spec that sets `unconnected:` has said how it wants them reported, so it
    is not warned. A name the outputs do use, but only through stopped names,
    is told which stop_gradients entries cut it off.
    """
    if "unconnected" in experiment.raw:
        return []
    deps = {name: {n.id for n in walk(expr.node) if isinstance(n, Name)}
            for name, expr in _expressions(experiment).items()}
    stopped = set(experiment.stop_gradients)
    outputs = [output.name for output in experiment.outputs]
    reached = _reached(outputs, deps, stopped)
    used = _reached(outputs, deps, set())
    explicit = "wrt" in experiment.raw
    warnings = []
    for name in experiment.wrt:
        if name in reached:
            continue
        if name in experiment.inputs:
            loc = experiment.inputs[name].loc
        else:
            loc = _expressions(experiment)[name].loc
        key = "wrt" if explicit else f"inputs.{name}"
        if name in used:
            cutting = [s for s in experiment.stop_gradients
                       if s in reached and s != name and name in _reached([s], deps, set())]
            through = ", ".join(repr(s) for s in cutting)
            message = (f"the outputs use {name!r} only through {through} (listed in "
                       f"stop_gradients), so its gradients are all unconnected")
        else:
            message = f"no output depends on {name!r}, so its gradients are all unconnected"
        warnings.append(LintWarning(message, loc, key))
    return warnings


def _reached(start: list[str], deps: dict[str, set[str]], stopped: set[str]) -> set[str]:
    """Every name reachable from `start` through the expressions, not expanding stopped names."""
    reached: set[str] = set()
    pending = list(start)
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        if name not in stopped:
            pending.extend(deps.get(name, ()))
    return reached
