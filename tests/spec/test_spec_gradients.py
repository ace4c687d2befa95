"""register, override_map and functions: names, scopes, op matching and arity checks."""
from __future__ import annotations

import pytest
from spec_samples import BASE


def with_sections(text: str) -> str:
    return BASE + text


def first(err) -> str:
    return str(err).splitlines()[0]


@pytest.mark.parametrize("op_text, op", [
    ("Sign", "sign"), ("SIGN", "sign"), ("Identity", "identity"), ("StopGradient", "stop_gradient"),
    ("ZerosLike", "zeros_like"), ("MatMul", "matmul"), ("log_softmax", "log_softmax"),
])
def test_override_op_types_match_case_and_underscore_insensitively(op_text, op, load):
    exp = load(with_sections(f"override_map: {{{op_text}: identity}}\n"))
    assert exp.override_map[0].op == op and exp.override_map[0].scope is None


def test_register_and_both_override_forms(load):
    exp = load(with_sections(
        "register:\n"
        "  QuantizeGrad: where(abs(x) <= 1, dy, 0)\n"
        "  PairGrad: [dy, none]\n"
        "  SumGrad: ones_like(x) * dy\n"
        "override_map:\n"
        "  - {op: sign, gradient: QuantizeGrad}\n"
        "  - {op: Mul, gradient: PairGrad, scope: [y]}\n"
        "  - {op: sum, gradient: SumGrad, scope: y}\n"))
    assert [(e.op, e.gradient, e.scope) for e in exp.override_map] == [
        ("sign", "QuantizeGrad", None), ("mul", "PairGrad", ("y",)), ("sum", "SumGrad", ("y",))]
    assert exp.register["PairGrad"].grads[1] is None
    assert exp.register["QuantizeGrad"].grads[0].text == "where(abs(x) <= 1, dy, 0)"
    assert exp.override_map[1].loc.line == 14


@pytest.mark.parametrize("sections, expected", [
    ("override_map: {sgn: identity}\n",
     "spec.yaml:8:16: override_map.sgn: unknown op type 'sgn' (did you mean 'sign'?)"),
    ("override_map: {sign: QuantizeGrad}\n",
     "spec.yaml:8:22: override_map.sign: unknown gradient 'QuantizeGrad': register it under "
     "register, or use a built-in (identity, hardtanh, reverse, zero)"),
    ("register: {identity: dy}\n",
     "spec.yaml:8:12: register.identity: 'identity' is a built-in gradient; pick another name"),
    ("register: {HardTanh: dy}\n",
     "spec.yaml:8:12: register.HardTanh: 'hardtanh' is a built-in gradient; pick another name"),
    ("register: {Sign: dy}\n",
     "spec.yaml:8:12: register.Sign: 'Sign' is an op name; pick another name"),
    ("register: {G: dy * w}\n",
     "spec.yaml:8:20: register.G: 'w' is not visible here: a registered gradient sees x, x0, "
     "x1.. (the op's inputs), y, y0.. (its outputs), dy, dy0.. (their upstream gradients) and the "
     "op's attributes"),
    ("register: {G: dy}\noverride_map: {clip: G}\n",
     "spec.yaml:9:16: override_map.clip: gradient 'G' gives 1 gradient but op 'clip' has 3 inputs "
     "(x, lo, hi) (write a list with one entry per input, none where an input gets no gradient)"),
    ("register:\n  G: sum(dy, axis=axis)\noverride_map: {sign: G}\n",
     "spec.yaml:9:19: register.G: op 'sign' (from override_map) has no attribute 'axis' (it has "
     "no attributes)"),
    ("register:\n  G: x1 * dy\noverride_map: {sign: G}\n",
     "spec.yaml:9:6: register.G: 'x1' does not exist: override_map sends op 'sign' here, which "
     "has 1 input"),
    ("override_map:\n  - {op: sign, gradient: identity}\n  - {op: Sign, gradient: zero}\n",
     "spec.yaml:10:5: override_map[1]: op 'sign' is overridden twice for every op (first at "
     "line 9)"),
    ("override_map:\n  - {op: sign, gradient: identity, scope: [s, y]}\n"
     "  - {op: sign, gradient: zero, scope: y}\n",
     "spec.yaml:10:5: override_map[1]: op 'sign' is overridden twice within 'y' (first at line 9)"),
    ("override_map:\n  - {op: sign, gradient: identity, scope: [ss]}\n",
     "spec.yaml:9:44: override_map[0].scope: 'ss' is not an input, let or output (did you mean "
     "'s'?)"),
    ("override_map:\n  - {op: sign, gradient: identity, scope: []}\n",
     "spec.yaml:9:43: override_map[0].scope: the scope is empty; leave scope out for an override "
     "of every op"),
    ("override_map:\n  - {op: sign, grad: identity}\n",
     "spec.yaml:9:16: override_map[0].grad: unknown key 'grad' in override_map[0] (did you mean "
     "'gradient'?)"),
    ("override_map: [sign]\n",
     "spec.yaml:8:16: override_map[0]: expected a mapping {op, gradient, scope}, got the string "
     "'sign'"),
])
def test_gradient_errors(sections, expected, spec_error):
    assert first(spec_error(with_sections(sections))) == expected


def test_register_sees_attributes_of_its_op(load):
    exp = load(with_sections("register:\n  G: dy * scale\n  H: sum(dy, axis=axis) * x0\n"
                             "override_map: {reverse_gradient: G, Sum: H}\n"))
    assert {e.op for e in exp.override_map} == {"reverse_gradient", "sum"}


FUNCTION = """\
functions:
  sigmoid_or_bin:
    args: [x, rand]
    forward: where(rand > 0.5, sigmoid(x), cast(x > 0, dtype(x)))
    gradient: [dy * sigmoid(x) * (1 - sigmoid(x)), none]
  twice:
    args: [a]
    forward: sigmoid_or_bin(a, a) * 2
    gradient: 2 * dy
"""


def test_functions(load):
    text = BASE.replace("sign(x)", "twice(sigmoid_or_bin(x, w))") + FUNCTION
    exp = load(text)
    f = exp.functions["sigmoid_or_bin"]
    assert f.args == ("x", "rand") and f.grads[1] is None
    assert f.grads[0].text == "dy * sigmoid(x) * (1 - sigmoid(x))"
    assert exp.functions["twice"].grads[0].loc.line == 16


@pytest.mark.parametrize("change, expected", [
    (("forward: sigmoid_or_bin(a, a) * 2", "forward: twice(a)"),
     "spec.yaml:15:14: functions.twice.forward: function 'twice' cannot call itself"),
    (("forward: where(rand", "forward: twice(x) + where(rand"),
     "spec.yaml:11:14: functions.sigmoid_or_bin.forward: 'twice' is defined after "
     "'sigmoid_or_bin'; a function can only call functions defined above it"),
    (("gradient: 2 * dy", "gradient: 2 * dy * w"),
     "spec.yaml:16:24: functions.twice.gradient: a function sees only its args (a); pass 'w' as "
     "an argument"),
    (("forward: sigmoid_or_bin(a, a) * 2", "forward: a * dy"),
     "spec.yaml:15:18: functions.twice.forward: undefined name 'dy' (forward sees only the args: "
     "a)"),
    (("gradient: 2 * dy", "gradient: [dy, dy]"),
     "spec.yaml:16:15: functions.twice.gradient: expected 1 gradient (one per argument of "
     "function 'twice'), got 2"),
    (("gradient: [dy * sigmoid(x) * (1 - sigmoid(x)), none]", "gradient: dy"),
     "spec.yaml:12:15: functions.sigmoid_or_bin.gradient: function 'sigmoid_or_bin' has 2 "
     "arguments, so its gradient must be a list of 2 expressions (write none where an argument "
     "gets no gradient)"),
    (("args: [a]", "args: [a, a]"),
     "spec.yaml:14:15: functions.twice.args: argument 'a' is listed twice"),
    (("args: [a]", "args: [dy]"),
     "spec.yaml:14:12: functions.twice.args: 'dy' is the upstream gradient inside gradient; pick "
     "another argument name"),
    (("    gradient: 2 * dy\n", ""),
     "spec.yaml:13:3: functions.twice: missing the required key 'gradient'"),
    (("twice:", "s:"),
     "spec.yaml:13:3: functions.s: 's' is already a let (line 5); names must be unique across "
     "inputs, let, outputs and functions"),
])
def test_function_errors(change, expected, spec_error):
    text = BASE + FUNCTION
    assert change[0] in text
    assert first(spec_error(text.replace(*change))) == expected


def test_calling_a_function_checks_its_arity(spec_error):
    err = spec_error(BASE.replace("sign(x)", "twice(x, w)") + FUNCTION)
    assert first(err) == "spec.yaml:5:15: let.s: twice(a) takes at most 1 argument, got 2"


def test_multi_output_lets_unpack(load):
    exp = load(BASE.replace("  s: sign(x)", "  s: sign(x)\n  \"zeroed, index\": zero_out(x)\n"
                            "  \"m, i\": max_with_argmax(x, axis=0)"))
    assert [let.names for let in exp.lets] == [("s",), ("zeroed", "index"), ("m", "i")]
