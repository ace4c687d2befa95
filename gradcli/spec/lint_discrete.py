"""Overrides that match an op but can never run: the op sits on a boolean/integer path.

No gradient flows through a boolean or integer tensor (TensorFlow gives None),
so an override of `cast` whose input is `v > 0`, or of the comparison itself,
matches an op yet never changes a gradient. The spiking-surrogate pattern
needs a custom-gradient function instead; the warning shows it.
"""
from __future__ import annotations

from gradcli.lang.ast import Call, Const, Name, Node, walk
from gradcli.ops import OPS
from gradcli.spec.arrays import FLOAT_DTYPES
from gradcli.spec.model import Experiment

# Ops whose output is boolean or an integer index (the op table's `result`): nothing ever
# flows back into them.
BOOLEAN_OPS = frozenset(name for name, spec in OPS.items() if spec.result == "bool")
INDEX_OPS = frozenset(name for name, spec in OPS.items() if spec.result == "index")
DISCRETE_DTYPES = frozenset({"int32", "int64", "bool"})

SURROGATE_HINT = (
    "for a surrogate gradient of a step, wrap it in a custom-gradient function instead: "
    "functions: {spike: {args: [v], forward: 'cast(v > 0, dtype(v))', "
    "gradient: 'dy * 4 * sigmoid(4 * v) * (1 - sigmoid(4 * v))'}} and use spike(v)")


def cut_overrides(experiment: Experiment) -> list[tuple[int, object, str]]:
    """(index, entry, reason) for every override_map entry whose matched ops all sit on a
    boolean/integer path; entries that match nothing are the other lint's business."""
    discrete = _discrete_names(experiment)
    exprs = _scoped_expressions(experiment)
    found = []
    for i, entry in enumerate(experiment.override_map):
        names = entry.scope if entry.scope is not None else list(exprs)
        calls = [(node, kinds) for name in names if name in exprs
                 for node, kinds in _calls(exprs[name], discrete) if node.func == entry.op]
        if not calls:
            continue
        if all(call.func in BOOLEAN_OPS for call, _ in calls):
            reason = (f"every {entry.op} op it matches has a boolean output, and no gradient "
                      "flows back through a boolean tensor")
        elif all(call.func in INDEX_OPS for call, _ in calls):
            reason = (f"every {entry.op} op it matches has an integer index as its output, and "
                      "no gradient flows back through an integer tensor")
        elif all(_inputs_discrete(call, kinds) for call, kinds in calls):
            reason = (f"every {entry.op} op it matches takes a boolean/integer input, so no "
                      "gradient reaches the float inputs through it")
        else:
            continue
        found.append((i, entry, reason))
    return found


def message(entry, reason: str) -> str:
    return (f"override_map entry {entry.op!r} -> {entry.gradient!r} can never take effect: "
            f"{reason} (TensorFlow gives None too); {SURROGATE_HINT}")


def _scoped_expressions(experiment: Experiment) -> dict:
    """Each let/output name -> its expression; function bodies under their own name."""
    out = {}
    for let in experiment.lets:
        for name in let.names:
            out[name] = let.expr.node
    for output in experiment.outputs:
        out[output.name] = output.expr.node
    for fname, function in experiment.functions.items():
        out.setdefault(f"functions.{fname}", function.forward.node)
    return out


def _discrete_names(experiment: Experiment) -> set[str]:
    """Inputs and lets known to hold a boolean or integer tensor."""
    names = {name for name, spec in experiment.inputs.items() if spec.dtype not in FLOAT_DTYPES}
    for let in experiment.lets:
        if len(let.names) == 1 and _kinds(let.expr.node, names)[id(let.expr.node)]:
            names.add(let.names[0])
    return names


def _calls(node: Node, discrete: set[str]):
    kinds = _kinds(node, discrete)
    return [(n, kinds) for n in walk(node) if isinstance(n, Call)]


def _inputs_discrete(call: Call, kinds: dict) -> bool:
    """Whether every tensor input of the op is boolean/integer (an attribute, such as cast's
    dtype, is no input: the table says which parameters take tensors)."""
    spec = OPS[call.func]
    args = [a for p, a in zip(spec.params, call.args) if p in spec.tensor_params]
    args += [a for k, a in call.kwargs if k in spec.tensor_params]
    tensors = [a for a in args if not isinstance(a, Const)]
    return bool(tensors) and all(kinds.get(id(a), False) for a in tensors)


def _kinds(root: Node, discrete: set[str]) -> dict[int, bool]:
    """id(node) -> True when the node is known to be boolean/integer (children first, so deep
    expressions need no recursion). A bare number takes the dtype beside it: neutral."""
    kinds: dict[int, bool] = {}
    for node in reversed(list(walk(root))):
        if isinstance(node, Name):
            kinds[id(node)] = node.id in discrete or node.id in DISCRETE_DTYPES
        elif isinstance(node, Const):
            kinds[id(node)] = isinstance(node.value, bool) or node.value in DISCRETE_DTYPES
        elif isinstance(node, Call):
            kinds[id(node)] = _call_kind(node, kinds)
        else:
            kinds[id(node)] = False
    return kinds


def _call_kind(node: Call, kinds: dict) -> bool:
    if node.func in BOOLEAN_OPS or node.func in INDEX_OPS:
        return True
    if node.func == "cast":
        dtype = node.args[1] if len(node.args) > 1 else dict(node.kwargs).get("dtype")
        return dtype is not None and kinds.get(id(dtype), False)
    if node.func in OPS and OPS[node.func].result == "dtype":  # dtype(k): k's kind
        return bool(node.args) and kinds.get(id(node.args[0]), False)
    tensors = [a for a in node.args if not isinstance(a, Const)]
    return bool(tensors) and all(kinds.get(id(a), False) for a in tensors) \
        and node.func in ("add", "sub", "mul", "neg", "abs", "maximum", "minimum", "identity")
