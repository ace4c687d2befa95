"""Every kind of bad spec: a SpecError with the right line, column, key path and hint."""
from __future__ import annotations

import pytest
from spec_samples import BASE


def change(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


# (spec text, expected first line of the rendered error)
CASES = {
    "unknown initializer": (
        change("uniform:", "uniformm:"),
        "spec.yaml:3:7: inputs.w: unknown initializer 'uniformm' (did you mean 'uniform'?)"),
    "unknown top-level key": (
        "inptus: {}\n" + BASE,
        "spec.yaml:1:1: inptus: unknown key 'inptus' (did you mean 'inputs'?)"),
    "undefined name": (
        change("sign(x)", "sign(xx)"),
        "spec.yaml:5:11: let.s: undefined name 'xx' (did you mean 'x'?)"),
    "unknown function": (
        change("sign(x)", "sgn(x)"),
        "spec.yaml:5:6: let.s: unknown function 'sgn' (did you mean 'sign'?)"),
    "unclosed call": (
        change("sign(x)", "sign(x"),
        "spec.yaml:5:12: let.s: expected ')' to close the call opened at column 5"),
    "attribute access": (
        change("sign(x)", "x.T"),
        "spec.yaml:5:7: let.s: unexpected '.': attribute access is not part of the expression "
        "language (call an op instead, e.g. transpose(x))"),
    "chained comparison": (
        change("sign(x)", "x < 1 < 2"),
        "spec.yaml:5:12: let.s: comparisons do not chain: a < b < c is not allowed "
        "(write (a < b) & (b < c))"),
    "unknown keyword": (
        change("sum(s * w)", "sum(s * w, axs=0)"),
        "spec.yaml:7:21: outputs.y: sum() has no parameter 'axs'; its signature is "
        "sum(x, axis=None, keepdims=False) (did you mean 'axis'?)"),
    "too many arguments": (
        change("sign(x)", "sign(x, x)"),
        "spec.yaml:5:14: let.s: sign(x) takes at most 1 argument, got 2"),
    "missing argument": (
        change("sign(x)", "clip(x, -1)"),
        "spec.yaml:5:6: let.s: clip(x, lo, hi) is missing the argument 'hi'"),
    "argument twice": (
        change("sign(x)", "clip(x, 0, 1, x=x)"),
        "spec.yaml:5:22: let.s: clip() got 'x' both by position and by keyword"),
    "attribute not constant": (
        change("sum(s * w)", "sum(s * w, axis=x)"),
        "spec.yaml:7:22: outputs.y: sum's axis must be an integer, a list of integers or none "
        "(a constant), got the name 'x'"),
    "bad dtype": (
        change("sign(x)", "cast(x, float16)"),
        "spec.yaml:5:14: let.s: cast's dtype must be one of float32, float64, int32, int64, bool "
        "or dtype(x), got the name 'float16'"),
    "dtype as a value": (
        change("sign(x)", "x + float32"),
        "spec.yaml:5:10: let.s: 'float32' is a dtype; it can only be cast's dtype"),
    "multi-output inside an expression": (
        change("sign(x)", "zero_out(x) + 1"),
        "spec.yaml:5:6: let.s: zero_out has 2 outputs, so it cannot be used inside a larger "
        "expression (unpack it in a let: \"a, b\": zero_out(...))"),
    "multi-output with one name": (
        change("sign(x)", "zero_out(x)"),
        "spec.yaml:5:6: let.s: zero_out has 2 outputs but 1 name is given (unpack it in a let: "
        "\"a, b\": zero_out(...))"),
    "two names for one value": (
        change("  s: sign(x)", "  \"s, t\": sign(x)"),
        "spec.yaml:5:11: let.s, t: 2 names are given but this expression has one value; only a "
        "multi-output op such as zero_out(x) can be unpacked"),
    "multi-output as an output": (
        change("sum(s * w)", "max_with_argmax(x)"),
        "spec.yaml:7:6: outputs.y: max_with_argmax has 2 outputs but 1 name is given (unpack it "
        "in a let: \"a, b\": max_with_argmax(...))"),
    "concat without a list": (
        change("sign(x)", "concat(x, axis=0)"),
        "spec.yaml:5:13: let.s: concat takes a list of tensors first, e.g. concat([a, b])"),
    "getitem called directly": (
        change("sign(x)", "getitem(x, 0)"),
        "spec.yaml:5:6: let.s: getitem is not called directly; index with x[...]"),
    "float index": (
        change("sign(x)", "x[1.5]"),
        "spec.yaml:5:8: let.s: an index must be an integer, a slice, None or a list of integers, "
        "got 1.5"),
    "list outside concat": (
        change("sign(x)", "'[x, x]'"),
        "spec.yaml:5:7: let.s: a list of expressions is only allowed as the first argument of "
        "concat or stack (write stack([a, b]) or concat([a, b]))"),
    "keepdims not a bool": (
        change("sum(s * w)", "sum(s * w, keepdims=1)"),
        "spec.yaml:7:26: outputs.y: sum's keepdims must be True or False (a constant), got 1"),
    "one_hot depth": (
        change("sign(x)", "one_hot(x, 0)"),
        "spec.yaml:5:17: let.s: one_hot's depth must be a positive integer (a constant), got 0"),
    "an op used as a value": (
        change("sign(x)", "x * sign"),
        "spec.yaml:5:10: let.s: 'sign' is a function; call it, e.g. sign(x)"),
    "a tensor called": (
        change("sign(x)", "x(1)"),
        "spec.yaml:5:6: let.s: 'x' is a tensor, not a function"),
    "a string as a tensor": (
        change("sign(x)", "x + 'a'"),
        "spec.yaml:5:10: let.s: a string is not a tensor"),
    "grad_pass_through wrt unknown": (
        change("sign(x)", "grad_pass_through(round(x), wrt=q)"),
        "spec.yaml:5:38: let.s: undefined name 'q'"),
    "let uses a later let": (
        change("  s: sign(x)", "  s: t\n  t: x"),
        "spec.yaml:5:6: let.s: 't' is defined later in let; a let may only use inputs and "
        "earlier lets"),
    "let uses an output": (
        change("sign(x)", "y"),
        "spec.yaml:5:6: let.s: 'y' is an output; a let may only use inputs and earlier lets"),
    "output uses an output": (
        BASE + "  z: y * 2\n",
        "spec.yaml:8:6: outputs.z: 'y' is an output; outputs may use inputs and lets, not other "
        "outputs (compute it under let)"),
    "name clash": (
        change("  s: sign(x)", "  x: sign(x)"),
        "spec.yaml:5:3: let.x: 'x' is already an input (line 2); names must be unique across "
        "inputs, let, outputs and functions"),
    "op name as a name": (
        change("  s: sign(x)", "  exp: sign(x)"),
        "spec.yaml:5:3: let.exp: 'exp' is an op name; pick another name"),
    "dtype name as a name": (
        change("  x:", "  float32:"),
        "spec.yaml:2:3: inputs.float32: 'float32' is a dtype name; pick another name"),
    "invalid name": (
        change("  s: sign(x)", "  2s: sign(x)"),
        "spec.yaml:5:3: let.2s: '2s' is not a valid name (names are letters, digits and '_', "
        "not starting with a digit)"),
    "duplicate YAML key": (
        change("  s: sign(x)", "  s: sign(x)\n  s: x"),
        "spec.yaml:6:3: duplicate key 's': it is already defined at line 5 (YAML would silently "
        "keep the last one)"),
    "invalid YAML": (  # placed at the unclosed '[' (YAML finds it only on the next line)
        BASE + "wrt: [x\n",
        "spec.yaml:8:6: invalid YAML: did not find expected ',' or ']' (the flow sequence opened "
        "here is not closed before line 9)"),
    "unclosed flow list before the next key": (
        change("  x: [-2.0, -0.5, 0.5, 2.0]", "  x: [-2.0, -0.5, 0.5, 2.0"),
        "spec.yaml:2:6: invalid YAML: did not find expected ',' or ']' (the flow sequence opened "
        "here is not closed before line 3)"),
    "invalid YAML on one line": (
        BASE + "wrt: [x}\n",
        "spec.yaml:8:8: invalid YAML: did not find expected ',' or ']' (while parsing a flow "
        "sequence)"),
    "not a mapping": (
        "- 1\n- 2\n",
        "spec.yaml:1:1: a spec must be a mapping of keys such as inputs and outputs, got a list"),
    "no outputs": (
        "inputs: {x: 1.0}\n",
        "spec.yaml:1:1: outputs: a spec needs at least one output (add outputs: {y: sum(x * x)})"),
    "wrong type": (
        BASE + "wrt: 3\n",
        "spec.yaml:8:6: wrt: expected a list of names, got a number"),
    "wrt unknown": (
        BASE + "wrt: [x, ww]\n",
        "spec.yaml:8:10: wrt: 'ww' is not an input, let or output (did you mean 'w'?)"),
    "wrt not trainable": (
        change("shape: [4]}", "shape: [4], trainable: false}") + "wrt: [w]\n",
        "spec.yaml:8:7: wrt: input 'w' is not trainable, so it has no gradient (remove "
        "'trainable: false' from it)"),
    "stop_gradients twice": (
        BASE + "stop_gradients: [s, s]\n",
        "spec.yaml:8:21: stop_gradients: 's' is listed twice"),
    "grad_ys not an output": (
        BASE + "grad_ys: {s: 1.0}\n",
        "spec.yaml:8:11: grad_ys.s: 's' is not an output; 's' is a let"),
    "backend": (
        "backend: pytorch\n" + BASE,
        "spec.yaml:1:10: backend: unknown value 'pytorch'; expected one of numpy, torch, jax, "
        "tensorflow (did you mean 'torch'?)"),
    "comma in a flow mapping": (
        BASE + "register: {Q: where(x > 0, dy, 0)}\n",
        "spec.yaml:8:26: register.Q: expected ')' to close the call opened at column 6 (inside "
        "YAML's {...} or [...] a comma ends the value: quote the expression)"),
    "unquoted list expression": (
        change("sign(x)", "[x, x]"),
        "spec.yaml:5:6: let.s: expected an expression, got a list (YAML reads [...] and {...} as "
        "its own lists and mappings: quote the expression)"),
    "dtype": (
        "dtype: float16\n" + BASE,
        "spec.yaml:1:8: dtype: unknown value 'float16'; expected one of float64, float32 "
        "(did you mean 'float64'?)"),
    "seed": (
        "seed: -1\n" + BASE,
        "spec.yaml:1:7: seed: expected an integer between 0 and 18446744073709551615, got -1"),
    "unconnected": (
        BASE + "unconnected: zeros\n",
        "spec.yaml:8:14: unconnected: unknown value 'zeros'; expected one of none, zero, error "
        "(did you mean 'zero'?)"),
    "train loss": (
        BASE + "train: {loss: yy, optimizer: {name: sgd, lr: 0.1}}\n",
        "spec.yaml:8:15: train.loss: 'yy' is not an output (did you mean 'y'?)"),
    "train steps": (
        BASE + "train: {optimizer: {name: sgd, lr: 0.1}, steps: 0}\n",
        "spec.yaml:8:49: train.steps: expected an integer between 1 and 100000, got 0"),
    "optimizer name": (
        BASE + "train:\n  optimizer: {name: adamw, lr: 0.1}\n",
        "spec.yaml:9:21: train.optimizer.name: unknown value 'adamw'; expected one of sgd, "
        "momentum, adam, rmsprop (did you mean 'adam'?)"),
    "optimizer hyper-parameter": (
        BASE + "train:\n  optimizer: {name: sgd, lr: 0.1, momentum: 0.9}\n",
        "spec.yaml:9:35: train.optimizer.momentum: sgd has no hyper-parameter 'momentum'; it "
        "takes lr"),
    "optimizer lr missing": (
        BASE + "train:\n  optimizer: {name: adam}\n",
        "spec.yaml:9:14: train.optimizer: missing the required key 'lr' (the learning rate)"),
    "optimizer lr beyond float32": (  # tf.train makes it a float32 tensor, which cannot hold it
        BASE + "train:\n  optimizer: {name: adam, lr: 1.0e+39}\n",
        "spec.yaml:9:31: train.optimizer.lr: 1e+39 is beyond float32's range (max 3.402823e+38): "
        "tf.train turns hyper-parameters into float32 tensors"),
    "clip two kinds": (
        BASE + "train:\n  optimizer: {name: sgd, lr: 1}\n  clip: {norm: 1, value: [0, 1]}\n",
        "spec.yaml:10:9: train.clip: clip takes exactly one of norm, global_norm, value; got norm, "
        "value"),
    "schedule two kinds": (
        BASE + "train:\n  optimizer: {name: sgd, lr: 1}\n"
        "  schedule: {cosine: {steps: 5}, step: {every: 2, rate: 0.5}}\n",
        "spec.yaml:10:13: train.schedule: schedule takes exactly one of cosine, step, exponential; "
        "got cosine, step"),
    "schedule none": (
        BASE + "train:\n  optimizer: {name: sgd, lr: 1}\n  schedule: {}\n",
        "spec.yaml:10:13: train.schedule: schedule takes exactly one of cosine, step, exponential; "
        "got none"),
    "clip bounds": (
        BASE + "train:\n  optimizer: {name: sgd, lr: 1}\n  clip: {value: [1, -1]}\n",
        "spec.yaml:10:17: train.clip.value: clip value needs lo < hi, got [1, -1]"),
    "clip norm": (
        BASE + "train:\n  optimizer: {name: sgd, lr: 1}\n  clip: {global_norm: 0}\n",
        "spec.yaml:10:23: train.clip.global_norm: expected a positive number, got 0"),
    "expect gradient of a non-wrt name": (
        BASE + "expect:\n  gradients: {y: {s: [1, 2, 3, 4]}}\n",
        "spec.yaml:9:19: expect.gradients.y.s: 's' is not in wrt (x, w), so no gradient is "
        "computed for it"),
    "expect train without train": (
        BASE + "expect:\n  train: {loss: [1.0]}\n",
        "spec.yaml:9:10: expect.train: expect.train needs a train section to check"),
    "expect unknown key": (
        BASE + "expect:\n  value: {y: 1}\n",
        "spec.yaml:9:3: expect.value: unknown key 'value' in expect (did you mean 'values'?)"),
    "ragged literal": (
        change("[-2.0, -0.5, 0.5, 2.0]", "[[1.0, 2.0], [3.0]]"),
        "spec.yaml:2:19: inputs.x: ragged nested list: this list has 1 item where the first "
        "list at the same depth has 2"),
    "string in a literal": (
        change("[-2.0, -0.5, 0.5, 2.0]", "[1.0, abc]"),
        "spec.yaml:2:12: inputs.x: expected a number, got the string 'abc'"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rendered_error(name, spec_error):
    text, expected = CASES[name]
    assert str(spec_error(text)).splitlines()[0] == expected


def test_error_attributes_and_caret(spec_error):
    err = spec_error(change("sign(x)", "sign(xx)"))
    assert (err.path, err.line, err.column, err.key) == ("spec.yaml", 5, 11, "let.s")
    assert err.hint == "did you mean 'x'?"
    lines = str(err).splitlines()
    assert lines[1] == "      s: sign(xx)"
    assert lines[2] == "    " + " " * 10 + "^"


@pytest.mark.parametrize("value, line, column", [
    ('"sign(x) + q"', 5, 17),                 # inside double quotes
    ("'sign(x) + q'", 5, 17),                 # inside single quotes
    ("|\n    sign(x) +\n      q", 7, 7),      # a literal block
    (">\n    sign(x) +\n      q", 7, 7),      # a folded block
    ("sign(x) +\n    q", 6, 5),               # a plain scalar over two lines
])
def test_expression_errors_point_into_multi_line_and_quoted_scalars(value, line, column,
                                                                    spec_error):
    err = spec_error(change("sign(x)", value))
    assert (err.line, err.column, err.bare_message) == (line, column, "undefined name 'q'")


def test_empty_file(spec_error):
    assert str(spec_error("")) == "spec.yaml: the spec is empty: expected a mapping with at " \
                                  "least 'outputs'"
    assert "empty" in str(spec_error("# only a comment\n"))


def test_two_documents(spec_error):
    err = spec_error(BASE + "---\nname: b\n")
    assert err.line == 8 and "single document" in err.bare_message


def test_yaml_tags_are_refused(spec_error):
    err = spec_error("name: !!python/object:os.system ls\n" + BASE)
    assert (err.line, err.column) == (1, 7) and "not supported" in err.bare_message


def test_merge_keys_are_refused(spec_error):
    err = spec_error("a: &A {x: 1}\n" + BASE.replace("inputs:\n", "inputs:\n  <<: *A\n"))
    assert "merge keys" in err.bare_message


@pytest.mark.parametrize("text", [
    "a: " + "[" * 100_000 + "]" * 100_000,
    "a:\n" + "- " * 100_000 + "1\n",
    "a: " + "{a: " * 50_000 + "1" + "}" * 50_000,
])
def test_deeply_nested_yaml_is_refused_quickly(text, spec_error):
    # libyaml's composer segfaults and PyYAML's recurses on these: nesting is bounded first.
    assert "nests more than 64 levels" in spec_error(text).bare_message


def test_alias_bomb_is_refused(spec_error):
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    assert "expands to more than" in spec_error("\n".join(lines) + "\n").bare_message


def test_missing_file(tmp_path):
    from gradcli.errors import SpecError
    from gradcli.spec import load_spec
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "nope.yaml")
    with pytest.raises(SpecError, match="is not a file"):
        load_spec(tmp_path)


def test_file_over_one_mib(tmp_path):
    from gradcli.errors import SpecError
    from gradcli.spec import load_spec
    big = tmp_path / "big.yaml"
    big.write_text(BASE + "#" * (1 << 20))
    with pytest.raises(SpecError, match="the limit is 1048576"):
        load_spec(big)


def test_file_not_utf8(tmp_path):
    from gradcli.errors import SpecError
    from gradcli.spec import load_spec
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(BASE.encode() + b"name: \xff\n")
    with pytest.raises(SpecError, match="not valid UTF-8") as info:
        load_spec(bad)
    assert info.value.line == 8


@pytest.mark.parametrize("expression", [
    "reshape(x, [-1, 2])", "one_hot(cast(x, int64), 3)", "uniform([4], low=-1) * x",
    "grad_pass_through(round(x), wrt=x)", "reverse_gradient(x, scale=0.5)",
    "x[1:-1]", "x[[0, 3]]", "x[None, :]", "stack([x, w], axis=1)", "transpose(x, axes=[0])",
    "sum(x, axis=[0], keepdims=True)", "cast(x > 0, dtype(w))", "clip(x, -w, w)",
    "where(x > 0, x, 0.0) @ w", "max(x, 0) - min(x, axis=-1)", "bernoulli([4], p=0.25)",
])
def test_valid_expressions_load(expression, load):
    exp = load(change("sign(x)", f"'{expression}'"))
    assert exp.lets[0].expr.text == expression


@pytest.mark.parametrize("typed, meant", [
    ("sing", "sign"), ("sgin", "sign"),  # a swap is one edit, as the dropped letter of 'sin'
    ("reduce_max", "max"), ("reduce_mean", "mean"),  # TensorFlow's names
])
def test_an_unknown_function_suggests_the_op_meant(typed, meant, spec_error, base):
    err = spec_error(base.replace("sign(x)", f"{typed}(x)"))
    assert err.bare_message == f"unknown function {typed!r}"
    assert err.hint == f"did you mean {meant!r}?"


@pytest.mark.parametrize("expression, typed, meant", [
    ("sum(sinj(x))", "sinj", "sin"),  # sinh and sin are one edit away; sin the closer match
    ("sum(sinh(x) + sinj(x))", "sinj", "sinh"),  # but this expression calls sinh
    ("sum(cosz(x))", "cosz", "cosx"),  # cos, cosh and the spec's own cosx are one edit away
])
def test_an_unknown_function_prefers_the_spec_functions_and_the_ops_beside_it(expression, typed,
                                                                              meant, spec_error):
    err = spec_error(f"""\
        inputs:
          x: [1.0, 2.0]
        functions:
          cosx: {{args: [v], forward: v * 2, gradient: dy * 2}}
        outputs:
          y: {expression}
        """)
    assert err.bare_message == f"unknown function {typed!r}"
    assert err.hint == f"did you mean {meant!r}?"


@pytest.mark.parametrize("typed, meant", [
    ("sgin", "sign"), ("Sgn", "sign"),  # 'sgn' is as close to 'sin': sign is in the spec
    ("ReduceMax", "max"),
])
def test_an_unknown_override_op_prefers_the_ops_of_the_spec(typed, meant, spec_error, base):
    err = spec_error(base, overrides=[f"override_map.{typed}=identity"])
    assert err.bare_message == f"unknown op type {typed!r}"
    assert err.hint == f"did you mean {meant!r}?"
