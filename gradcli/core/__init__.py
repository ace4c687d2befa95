"""gradcli's bundled reverse-mode autodiff core on numpy: the library behind `import gradcli`."""
from ..fd import directional_projection
from . import control as _control  # noqa: F401 - registers the gradient-control rules
from . import grad_rules as _grad_rules  # noqa: F401 - registers every op type's gradient
from . import train
from .autodiff import gradients, true_gradients
from .budget import MemoryBudget, memory_budget
from .clip import clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from .control import custom_gradient, grad_pass_through, reverse_gradient, stop_gradient
from .evaluate import evaluate, function
from .graph import Op, Tensor, Variable
from .nonfinite import NonFinite, find_nonfinite, origin
from .numeric import numeric_gradients
from .ops_array import (
                        add_n,
                        argmax,
                        argmin,
                        bernoulli,
                        broadcast_to,
                        concat,
                        getitem,
                        log_softmax,
                        logsumexp,
                        max,
                        max_with_argmax,
                        mean,
                        min,
                        normal,
                        one_hot,
                        prod,
                        reshape,
                        set_seed,
                        softmax,
                        stack,
                        sum,
                        sum_to,
                        transpose,
                        uniform,
                        zero_out,
)
from .ops_math import (
                        abs,
                        add,
                        cast,
                        ceil,
                        clip,
                        constant,
                        cos,
                        div,
                        dtype,
                        equal,
                        exp,
                        floor,
                        greater,
                        greater_equal,
                        identity,
                        less,
                        less_equal,
                        log,
                        logical_and,
                        logical_not,
                        logical_or,
                        matmul,
                        maximum,
                        minimum,
                        mul,
                        neg,
                        not_equal,
                        ones_like,
                        pow,
                        reciprocal,
                        relu,
                        round,
                        sigmoid,
                        sign,
                        sin,
                        softplus,
                        sqrt,
                        square,
                        sub,
                        tanh,
                        variable,
                        where,
                        zeros_like,
)
from .registry import (
                        OverrideUnusedWarning,
                        gradient_override_map,
                        register_gradient,
                        registered_names,
                        unregister_gradient,
)

# Everything above except the implementation modules; gc.train stays a namespace.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and (_n == "train" or type(_v).__name__ != "module")]
