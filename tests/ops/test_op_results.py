"""The op table's `result` (what an op gives: a tensor, a boolean, an index, a dtype name) is
what its numpy kernel really returns, and the op sets other layers once wrote by hand are
derived from it: the lint's boolean and index ops, the op count's ops that build nothing."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.ops import OPS
from gradcli.ops.entry import op
from gradcli.spec import lint_discrete, opcount

# Attributes the sampler must give (they have no default); everything else takes its default.
NEEDED = {"cast": {"dtype": np.float64}, "reshape": {"shape": (3,)}, "one_hot": {"depth": 3},
          "getitem": {"index": (0,)}}
X = np.array([-1.5, 0.0, 2.0])
# Tensors the sampler must give (integer indices and labels); the others get X.
INPUTS = {"one_hot": [X.astype(np.int64)],
          "sparse_softmax_cross_entropy_with_logits": [np.array([0, 2]), np.stack([X, -X])]}


def kernel_result(name: str) -> str | None:
    """What the op's numpy kernel gives on float64 tensors: 'bool', 'index' or 'tensor'."""
    spec = OPS[name]
    if spec.kernel is None:
        return None
    if spec.variadic:
        out = spec.kernel([X, X])
    elif not spec.tensor_params:  # a seeded draw: kernel(generator, shape, **attributes)
        out = spec.kernel(np.random.default_rng(0), (3,))
    else:
        values = INPUTS.get(name) or [X for _ in spec.tensor_params]
        with np.errstate(all="ignore"):  # sqrt(-1.5), 1 / 0: only the dtype matters here
            out = spec.kernel(*values, **NEEDED.get(name, {}))
    first = np.asarray(out[0] if spec.outputs > 1 else out)
    return {"b": "bool", "i": "index"}.get(first.dtype.kind, "tensor")


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].kernel is not None))
def test_each_ops_result_is_what_its_kernel_returns(name):
    assert OPS[name].result == kernel_result(name)


def test_the_results_the_table_says():
    results = {n: s.result for n, s in OPS.items() if s.result != "tensor"}
    assert results == {"less": "bool", "less_equal": "bool", "greater": "bool",
                       "greater_equal": "bool", "equal": "bool", "not_equal": "bool",
                       "logical_and": "bool", "logical_or": "bool", "logical_not": "bool",
                       "argmax": "index", "argmin": "index", "dtype": "dtype"}
    assert isinstance(gc.dtype(gc.constant(X)), np.dtype)  # a dtype, no tensor: no op built
    assert gc.argmax(gc.constant(X)).dtype == np.int64


def test_the_lint_and_the_op_count_read_their_sets_from_the_table():
    assert lint_discrete.BOOLEAN_OPS == {n for n, s in OPS.items() if s.result == "bool"}
    assert lint_discrete.INDEX_OPS == {"argmax", "argmin"}
    assert opcount._NOT_OPS == {"dtype"}


def test_an_entry_refuses_an_unknown_result():
    with pytest.raises(ValueError, match="result 'complex'"):
        op("nothing(x)", "-", np.negative, family="unary", result="complex")
    assert "nothing" not in OPS
