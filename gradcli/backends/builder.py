"""The interpreter's builder: the part that is one thing on every backend.

Every backend (the numpy core, torch, jax, tensorflow) gives the expression interpreter
(lang/interpret.py) the same Builder; the runner asks every backend's Program the same
questions (program.py: the flow). Read side by side, the core's builder (numpy.py) and the
eager one (eager.py) do these alike, so they are written here once:

- constants: a literal's numbers take the spec's float dtype (booleans stay booleans);
  the dtype helpers (is_float, to_index, as_tensor) read the backend's own dtype_name,
  to_numpy and tensor;
- a function's forward: its arguments bound to its parameter names, its `let:` evaluated
  in order over them (the intermediates its gradient expressions see, as a
  tf.custom_gradient closure sees the forward's), its result one tensor or a tuple;
- a function's gradient expressions, evaluated over those names and dy, dy0, dy1...; a
  registered gradient's, over the op's attributes, inputs, outputs and upstream gradients;
- how many ops each override_map entry matched (the runner warns of those with none);
- a gradient build's failure as a SpecError at the expression of the output it was for;
- the defaults of a backend that never builds again (checkpoint, rebuilding, bind).

What stays apart is each backend's nature, not a second copy of the same facts:
- where an override lives: the core records it on the op as the op is built (its
  registry's override scope) and keeps one graph for both gradient sets, with the true
  rules beside the overriding ones; an eager framework has no graph to annotate, so each
  overridden op runs inside its custom-gradient op, and "true" is a second build;
- functions and grad_pass_through: the core's custom_gradient and grad_pass_through ops;
  on a kit, its custom-gradient op, with the lets passed in as residuals (jax's
  custom_vjp must not close over traced values);
- grad(y, x): the core adds the gradient's ops to the graph (y already is a function of
  x); a framework must build y again from its own handle on x (checkpoint, rebuilding);
- bind: the eager builds feed lets, probe them with -0.0 and stop them as they are bound
  (the core does that on its graph: feeds and stop_gradients of the gradient call);
- origin: the core stamps each op with its place; an eager build remembers the place
  for the checked build that locates a non-finite value;
- an op's arguments: the core's op builders take them as they are; a kit's raw ops need
  them bound and normalized first (eager_args.py).
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext

import numpy as np

from ..errors import GradcliError, SpecError
from ..lang.interpret import spec_error
from ..lang.rules import rule_names, upstream_names


class SpecBuilder:
    """Base of every backend's builder; a subclass gives tensor(), is_tensor(), dtype_name(),
    shape() and to_numpy() for its tensors, and the gradient-control hooks."""

    def __init__(self, dtype) -> None:
        self.dtype = np.dtype(dtype)  # the spec's float dtype
        self.matches: dict[int, int] = {}  # id(override_map entry) -> ops it matched

    # ----- override_map entries: how many ops each matched -----
    def matched(self, entry, ops: int = 1) -> None:
        self.matches[id(entry)] = self.matches.get(id(entry), 0) + ops

    def override_matches(self, entries) -> list:
        """[(entry, ops it matched)] for every entry, summed over the scopes it was in."""
        return [(e, self.matches.get(id(e), 0)) for e in entries]

    # ----- the backend's tensors (a subclass's) -----
    def tensor(self, array: np.ndarray):
        """A constant tensor holding exactly this array (its dtype kept)."""
        raise NotImplementedError

    def is_tensor(self, value) -> bool:
        raise NotImplementedError

    def dtype_name(self, value) -> str:
        raise NotImplementedError

    def shape(self, value) -> tuple:
        raise NotImplementedError

    def to_numpy(self, value):
        raise NotImplementedError

    # ----- constants and dtypes, alike everywhere -----
    def constant(self, value):
        array = np.asarray(value)
        if array.dtype.kind in "iuf":  # a literal's numbers take the spec's dtype
            array = array.astype(self.dtype)
        return self.tensor(array)

    def is_float(self, value) -> bool:
        return self.dtype_name(value).startswith("float")

    def to_index(self, value):
        return np.asarray(self.to_numpy(value)).tolist()

    def as_tensor(self, value):
        return value if self.is_tensor(value) else self.constant(value)

    def outputs(self, value) -> tuple[tuple, bool]:
        """(a forward's result as tensors, whether it is one): a tuple from a multi-output op
        is several; anything else, a list literal or a constant such as `3.0` included, one."""
        single = not isinstance(value, tuple)
        return tuple(self.as_tensor(v) for v in ((value,) if single else value)), single

    # ----- functions: the names their expressions see (a registered gradient's: lang) -----
    @staticmethod
    def function_forward(spec, args, evaluate) -> tuple[dict, object]:
        """(the names the function's gradients see: its arguments and its lets, the function's
        result): the forward as spec.forward says, over those names."""
        bound = dict(zip(spec.args, args))
        for name, expr in spec.lets:  # the forward's intermediates, which the gradients see
            bound[name] = evaluate(expr, bound)
        return bound, evaluate(spec.forward, bound)

    @staticmethod
    def function_gradients(spec, bound: dict, dys, evaluate) -> list:
        """One gradient (or None) per argument: spec.grads over bound, dy and dy0, dy1..."""
        seen = {**bound, **upstream_names(dys)}
        return [None if g is None else evaluate(g, seen) for g in spec.grads]

    @staticmethod
    def rule_gradients(grads, evaluate, attrs, inputs, outputs, dys) -> list:
        """A registered gradient's expressions (one per input, or one for all; None: no
        gradient) over what such a rule sees: the op's attributes, x, x0.., y, y0.., dy, dy0..
        (lang.rules). The core calls it from its registry's rule, a kit from its custom op."""
        names = rule_names(attrs, inputs, outputs, dys)
        return [None if g is None else evaluate(g, names) for g in grads]

    # ----- a backend that builds once: nothing to build again -----
    def checkpoint(self):
        return None

    def rebuilding(self, mark):
        return nullcontext()

    def bind(self, names, value, env):
        return value


@contextmanager
def gradient_of(expr, what: str, experiment=None):
    """A gradient build's failure (a backend's or a rule's error) as a SpecError at `expr`,
    the expression of the output (or loss) it was for: "<what>: <the error>". A registered
    gradient (or a function's) that returned the wrong thing is placed at its entry instead:
    that is where the mistake is."""
    try:
        yield
    except SpecError:
        raise
    except GradcliError as exc:
        name = getattr(exc, "gradient", None)
        if experiment is not None and name in experiment.register:
            raise experiment.register[name].loc.error(f"{what}: {exc}", key=f"register.{name}") \
                from None
        if experiment is not None and name in experiment.functions:
            raise experiment.functions[name].loc.error(f"{what}: {exc}", key=f"functions.{name}") \
                from None
        raise spec_error(expr, f"{what}: {exc}") from None
