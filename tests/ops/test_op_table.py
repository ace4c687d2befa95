"""The op table and what is derived from it: the table imports no layer above it, the core's
builders and every framework's op map come from its entries, spellings are looked up and never
evaluated, and `gradcli list ops` and `gradcli schema` show every op."""
from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gradcli as gc
import gradcli.ops
from gradcli.backends import opmap
from gradcli.cli import cli
from gradcli.ops import OPERATORS, OPS, PRECEDENCE, UNARY_OPERATORS
from gradcli.ops.entry import OpSpec, op

NEW = ("log1p", "expm1", "erf", "erfc", "atan", "asinh", "softsign", "leaky_relu", "elu", "relu6",
       "gelu", "silu", "hard_sigmoid", "heaviside", "argmax", "argmin")


def test_the_table_imports_numpy_and_nothing_of_core_spec_lang_or_backends():
    # gradcli/ops/ is data with numpy kernels: the core may read it (architecture.md)
    allowed = {"__future__", "ast", "importlib", "math", "operator", "struct", "typing", "numpy",
               "gradcli.ops", "gradcli.record"}
    folder = Path(gradcli.ops.__file__).parent
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = "gradcli.ops" if node.level == 1 else "gradcli" if node.level == 2 else ""
                names = [".".join(filter(None, [base, node.module]))]
            else:
                continue
            assert all(n.split(".")[0] in allowed or n in allowed or n.startswith("gradcli.ops")
                       for n in names), f"{path.name} imports {names}"


def test_every_table_op_is_a_public_core_builder_with_the_table_signature():
    for name, spec in OPS.items():
        if name == "grad_pass_through":  # gc's is TF's decorator form, grad_pass_through(fn)
            continue
        params = list(inspect.signature(getattr(gc, name)).parameters)
        assert params[:len(spec.params)] == list(spec.params), name
    assert gc.matmul(a=gc.constant([[2.0]]), b=gc.constant([[3.0]])).numpy().tolist() == [[6.0]]
    assert gc.leaky_relu(gc.constant(-1.0), alpha=0.5).numpy() == -0.5
    assert gc.softmax.__name__ == "softmax" and "softmax along axis" in gc.softmax.__doc__


def test_operators_and_precedence_come_from_the_table():
    assert OPERATORS["+"] == "add" and UNARY_OPERATORS["~"] == "logical_not"
    assert PRECEDENCE["**"] > PRECEDENCE["*"] > PRECEDENCE["+"] > PRECEDENCE["<"] > PRECEDENCE["&"]
    x = gc.constant([1.0, -2.0])
    assert (x ** 2 * 3 + 1).numpy().tolist() == [4.0, 13.0]  # Tensor operators from the table too


def test_a_spelling_is_looked_up_never_evaluated():
    spec = OpSpec("twice", ("x", "alpha"), {"alpha": 2.0}, tensor_params=("x",))
    roots = {"np": np}
    call = opmap._resolve("np.multiply(x, alpha)", spec, roots, "numpy")
    assert call(np.array([1.5]), alpha=3.0).tolist() == [4.5]
    assert opmap._resolve("np.negative", spec, roots, "numpy") is np.negative
    for bad, says in [("__import__('os').system('true')", "starts from one of ['np']"),
                      ("np.nothing_here", "has no 'nothing_here'"),
                      ("np.multiply(x, open('f'))", "or a literal"), ("np.(", "does not parse")]:
        with pytest.raises(LookupError, match=says.replace("(", r"\(").replace("[", r"\[")):
            opmap._resolve(bad, spec, roots, "numpy")


def test_a_backend_writing_other_ops_itself_than_the_table_says_fails_with_a_sentence():
    own = {name: None for name in opmap.needs_own("torch")}
    with pytest.raises(LookupError, match="writes .* itself, but the op table leaves exactly"):
        opmap.derive("torch", {}, {**own, "exp": np.exp})


def test_a_formula_is_the_numpy_kernel_over_the_tables_own_kernels():
    # hard_sigmoid is one formula (relu6(x + 3) / 6); the frameworks run it over their op maps
    # (tests/oracles/test_activations_tf.py checks those on every backend)
    x = np.array([-4.0, -3.0, 0.1, 2.9, 3.0, np.nan])
    np.testing.assert_array_equal(OPS["hard_sigmoid"].kernel(x), np.minimum(np.maximum(x + 3, 0), 6) / 6)
    assert OPS["hard_sigmoid"].spelling("torch") is None and OPS["exp"].spelling("jax") == "jnp.exp"


def test_an_entry_refuses_an_unknown_framework_or_family():
    with pytest.raises(ValueError, match="unknown framework"):
        op("nothing(x)", "-", np.negative, family="unary", mxnet="mx.nd.negative")
    assert "nothing" not in OPS


def test_list_ops_and_the_schema_show_the_new_ops():
    runner = CliRunner()
    listed = runner.invoke(cli, ["list", "ops"], terminal_width=200)
    assert listed.exit_code == 0
    for name in NEW:
        assert f"{name}(" in listed.output, name
    assert "leaky_relu(x, alpha=0.2)" in listed.output
    schema = json.loads(runner.invoke(cli, ["schema"]).output)
    entry = schema["properties"]["override_map"]["anyOf"][1]["items"]["properties"]["op"]
    assert set(NEW) <= set(entry["anyOf"][0]["enum"])
