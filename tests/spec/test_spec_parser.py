"""The expression parser: precedence, node shapes, offsets, error columns and limits."""
from __future__ import annotations

import pytest
from spec_samples import sx

from gradcli.errors import SpecError
from gradcli.lang import parse_expression


@pytest.mark.parametrize("text, tree", [
    ("-x**2", "(neg (pow x 2))"),
    ("-2**2", "(neg (pow 2 2))"),
    ("2**-x", "(pow 2 (neg x))"),
    ("2**3**2", "(pow 2 (pow 3 2))"),
    ("a - b - c", "(sub (sub a b) c)"),
    ("a / b * c", "(mul (div a b) c)"),
    ("a + b * c", "(add a (mul b c))"),
    ("-a @ b", "(matmul (neg a) b)"),
    ("a | b & c", "(logical_or a (logical_and b c))"),
    ("a & b | c", "(logical_or (logical_and a b) c)"),
    ("a < b & c >= d", "(logical_and (less a b) (greater_equal c d))"),
    ("a + b <= c * d", "(less_equal (add a b) (mul c d))"),
    ("a == b", "(equal a b)"),
    ("a != b", "(not_equal a b)"),
    ("a > b", "(greater a b)"),
    ("~a & b", "(logical_and (logical_not a) b)"),
    ("+x", "(identity x)"),
    ("(a + b) * c", "(mul (add a b) c)"),
    ("x[:, 1:3]", "(getitem x index=idx(slice(_,_,_), slice(1,3,_)))"),
    ("x[0, 1:3, None]", "(getitem x index=idx(0, slice(1,3,_), None))"),
    ("x[::2]", "(getitem x index=idx(slice(_,_,2)))"),
    ("x[-1]", "(getitem x index=idx(-1))"),
    ("x[i]", "(getitem x index=idx(i))"),
    ("x[[0, 2]]", "(getitem x index=idx([0 2]))"),
    ("x[0][1]", "(getitem (getitem x index=idx(0)) index=idx(1))"),
    ("f(x)[0]", "(getitem (f x) index=idx(0))"),
    ("-x[0]", "(neg (getitem x index=idx(0)))"),
    ("sum(x, axis=-1, keepdims=True)", "(sum x axis=-1 keepdims=True)"),
    ("cast(x, float32)", "(cast x 'float32')"),
    ("where(c, a, none)", "(where c a None)"),
    ("f(a, b,)", "(f a b)"),
    ("f()", "(f)"),
    ("[a, [1, 2]]", "[a [1 2]]"),
    ("concat([a, b], axis=0)", "(concat [a b] axis=0)"),
    ("x * -1", "(mul x -1)"),
])
def test_precedence_and_shapes(text, tree):
    assert sx(parse_expression(text)) == tree


def test_numbers_keep_their_types():
    values = [n.value for n in parse_expression("[1, .5, 1e-3, 2., 7E2, 0]").items]
    assert values == [1, 0.5, 0.001, 2.0, 700.0, 0]
    assert [type(v) for v in values] == [int, float, float, float, float, int]


def test_strings_and_constants():
    assert sx(parse_expression("f('a', \"b\", True, False, None)")) == "(f 'a' 'b' True False None)"
    assert parse_expression(r"'it\'s'").value == "it's"


def test_positions_are_offsets_of_operators_and_names():
    tree = parse_expression("a + sin(bb)")
    assert tree.pos == 2                      # the operator
    assert tree.args[0].pos == 0
    assert tree.args[1].pos == 4              # the call's name
    assert tree.args[1].args[0].pos == 8
    assert parse_expression("  -x").pos == 2


@pytest.mark.parametrize("text, column, message", [
    ("a < b < c", 7, "comparisons do not chain"),
    ("sign(x", 7, "expected ')' to close the call opened at column 5"),
    ("sign(x y)", 8, "expected ')' to close the call opened at column 5, found name 'y'"),
    ("x.T", 2, "unexpected '.': attribute access is not part of the expression language"),
    ("f(x)(y)", 5, "only an op or function name can be called"),
    ("a and b", 3, "'and' is not part of the expression language"),
    ("not a", 1, "'not' is not part of the expression language"),
    ("1e999", 1, "too large for a float"),
    ("9" * 400, 1, "too large for a float"),
    ("f(a=1, b)", 8, "a positional argument cannot follow a keyword argument"),
    ("f(a=1, a=2)", 8, "keyword argument 'a' is given twice"),
    ("x[1:2", 6, "expected ']' to close the index opened at column 2"),
    ("[1, 2", 6, "expected ']' to close the list opened at column 1"),
    ("(a + b", 7, "expected ')' to close the '(' opened at column 1"),
    ("", 1, "the expression is empty"),
    ("a +", 4, "the expression ended early"),
    ("a = b", 3, "'=' is only for keyword arguments"),
    ("(a, b)", 3, "tuples are not part of the expression language"),
    ("2x", 1, "invalid number '2x'"),
    ("x // 2", 3, "floor division"),
    ("'abc", 1, "unterminated string"),
    ("float32(x)", 1, "'float32' is a dtype, not a function"),
    ("x[]", 3, "empty index"),
    ("a b", 3, "expected an operator or the end of the expression"),
    ("a)", 2, "unmatched ')'"),
    ("x ! y", 3, "use ~ for logical not"),
    ("[1:2]", 3, "a slice is only allowed inside an index"),
    ("é", 1, "unexpected character"),
])
def test_errors_name_the_column_and_what_was_expected(text, column, message):
    with pytest.raises(SpecError) as info:
        parse_expression(text)
    assert info.value.column == column
    assert message in info.value.bare_message


def test_error_render_puts_the_caret_under_the_column():
    with pytest.raises(SpecError) as info:
        parse_expression("sum(x, axis=1")
    lines = str(info.value).splitlines()
    assert lines[0].startswith("<expression>:1:14: expected ')' to close the call opened at "
                               "column 4")
    assert lines[1] == "    sum(x, axis=1"
    assert lines[2] == "    " + " " * 13 + "^"


def test_length_limit():
    parse_expression("x" + " " * 3999)  # 4000 characters are fine
    with pytest.raises(SpecError, match="4001 characters long; the limit is 4000"):
        parse_expression("x" + " " * 4000)


@pytest.mark.parametrize("text", [
    "(" * 10_000 + "x" + ")" * 10_000,   # past the length limit
    "(" * 1_900 + "x" + ")" * 1_900,     # within it: the depth check must fire, not recursion
    "-" * 3_000 + "x",
    "2" + "**2" * 1_300,
    "f(" * 1_300 + "x" + ")" * 1_300,
    "[" * 1_900 + "]" * 1_900,
    "x" + "[0]" * 1_000,
    "a" + "+a" * 1_500,                  # a long flat chain is a deep tree too
], ids=["parens-10000", "parens-1900", "unary", "power", "calls", "lists", "indexes", "chain"])
def test_deep_or_long_input_is_a_spec_error_not_a_recursion_error(text):
    with pytest.raises(SpecError) as info:
        parse_expression(text)
    assert "nests" in str(info.value) or "limit is 4000" in str(info.value)


def test_depth_limit_boundary():
    parse_expression("(" * 40 + "x" + ")" * 40)
    parse_expression("sin(" * 40 + "x" + ")" * 40)
    with pytest.raises(SpecError, match="nests"):
        parse_expression("sin(" * 60 + "x" + ")" * 60)


def test_argument_limit():
    parse_expression("f(" + ", ".join(["x"] * 256) + ")")
    with pytest.raises(SpecError, match="more than 256 arguments"):
        parse_expression("f(" + ",".join(["x"] * 257) + ")")
