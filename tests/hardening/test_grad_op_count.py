"""grad(y, x) counts against the op limit: GRAD_FACTOR times the ops of y's graph, so a
gradient of a gradient of a long chain is refused by `check` instead of built."""
import pytest

from gradcli.errors import SpecError
from gradcli.spec import load_spec_text
from gradcli.spec.opcount import GRAD_FACTOR, count_ops


def chain(n: int, output: str) -> str:
    lines = ["inputs:", "  x: [1.0]", "let:", "  a0: x"]
    lines += [f"  a{i}: sin(a{i - 1})" for i in range(1, n)]
    return "\n".join(lines + ["outputs:", f"  y: {output.format(last=f'a{n - 1}')}", ""])


def test_a_grad_counts_three_times_its_y_graph():
    exp = load_spec_text(chain(100, "sum(grad({last}, x))"), path="g.yaml")
    # 99 sin lets, sum, and the grad: 3 x the 99 ops of a99's graph
    assert GRAD_FACTOR == 3 and count_ops(exp) == 99 + 1 + 3 * 99


def test_a_nested_grad_counts_the_inner_gradient_in_its_graph():
    exp = load_spec_text(chain(10, "sum(grad(grad({last}, x), x))"), path="g.yaml")
    inner = 3 * 9                     # grad(a9, x): 3 x 9 sin ops
    outer = 3 * (inner + 9)           # grad(grad(a9, x), x): its y's graph is inner + the lets
    assert count_ops(exp) == 9 + 1 + inner + outer


def test_a_fourth_order_gradient_of_a_long_chain_is_refused_when_loading():
    with pytest.raises(SpecError) as info:
        load_spec_text(chain(400, "sum(grad(grad(grad(grad({last}, x), x), x), x))"),
                       path="g.yaml")
    assert "for its grad() calls, 3x the ops of each y's graph" in info.value.bare_message
    assert "the limit is 100,000 ops per spec" in info.value.bare_message
    assert info.value.line == 405


def test_a_fourth_order_gradient_of_a_short_chain_loads():
    load_spec_text(chain(20, "sum(grad(grad(grad(grad({last}, x), x), x), x))"), path="g.yaml")
