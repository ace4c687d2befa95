"""Specs whose graph grows exponentially (or quadratically) are refused before anything is built."""
from __future__ import annotations

from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.core.graph import walk_ops
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text
from gradcli.spec.opcount import MAX_OPS, count_ops


def doubling_functions(depth: int) -> str:
    """f_i calls f_{i-1} twice: about 2**depth ops from a spec of a few hundred bytes."""
    lines = ["inputs:", "  a: [1.0, 2.0]", "functions:",
             "  f0: {args: [x], forward: x * 2, gradient: dy * 2}"]
    lines += [f"  f{i}: {{args: [x], forward: f{i - 1}(x) + f{i - 1}(x), gradient: dy}}"
              for i in range(1, depth)]
    return "\n".join(lines + ["outputs:", f"  y: sum(f{depth - 1}(a))", ""])


def test_check_refuses_forty_levels_of_doubling_and_says_where(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(doubling_functions(40))
    assert path.stat().st_size < 2500
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())  # rich wraps long lines
    # 2**40 - 1 forward ops of f39, plus its gradient expressions (one per f0 call).
    assert "builds 2,748,779,069,439 ops" in message
    assert f"{path}:45:6: outputs.y" in message           # the expression that builds them
    assert f"'f39' ({path}:43:3)" in message               # the function they come from
    assert f"limit is {MAX_OPS:,}" in message
    assert "Traceback" not in result.output


def test_the_count_matches_the_graph_the_core_builds():
    from gradcli.backends.numpy import NumpyProgram

    exp = load_spec_text(doubling_functions(8))
    counted = count_ops(exp)
    graph = walk_ops([NumpyProgram(exp).env["y"]])
    built = sum(1 for op in graph if op.type not in ("constant", "variable"))
    # Every forward op, plus the gradient expression each f0 call evaluates going backward.
    assert built == 2 ** 9 - 1
    assert counted == built + 2 ** 7


def test_a_spec_just_under_the_limit_loads():
    exp = load_spec_text(doubling_functions(12))
    assert count_ops(exp) < MAX_OPS


def test_a_registered_gradient_counts_once_per_op_it_overrides():
    # G builds f10: 2,047 calls (custom-gradient ops), 1,023 adds, 1,024 muls and 1,024
    # gradient muls, 5,118 ops, each time one of the 100 sign ops
    # is differentiated: 511,800 ops from a forward pass of 100.
    text = doubling_functions(11).replace("outputs:", "register:\n  G: f10(dy)\n"
                                          "override_map:\n  sign: G\nlet:\n" + "".join(
                                              f"  s{i}: sign(a)\n" for i in range(100))
                                          + "outputs:").replace("sum(f10(a))", "sum(s0)")
    try:
        load_spec_text(text, path="r.yaml")
    except SpecError as exc:
        error = exc
    assert (error.line, error.key) == (18, "override_map")  # the line of "sign: G"
    assert "builds 5,118 ops and runs once for each of the 100 'sign' ops" in error.bare_message
