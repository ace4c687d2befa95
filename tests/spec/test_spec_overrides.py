"""--set overrides: applied before validation, and errors in them named as --set KEY."""
from __future__ import annotations

import numpy as np
import pytest


def test_values_are_yaml(load, base):
    exp = load(base, overrides=["inputs.x=[1,2,3]", "train.steps=5",
                                "train.optimizer={name: adam, lr: 1e-3}", "seed=3"])
    np.testing.assert_array_equal(exp.inputs["x"].value, [1.0, 2.0, 3.0])
    assert exp.train.steps == 5 and exp.train.optimizer == "adam"
    assert exp.train.hyper == {"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}
    assert exp.seed == 3
    assert exp.raw["inputs"]["x"] == [1, 2, 3] and exp.raw["train"]["steps"] == 5


def test_later_overrides_win_and_keep_key_order(load, base):
    exp = load(base, overrides=["let.s=abs(x)", "let.s=sign(x) * 2", "override_map.sign=identity"])
    assert exp.lets[0].expr.text == "sign(x) * 2"
    assert [(e.op, e.gradient, e.scope) for e in exp.override_map] == [("sign", "identity", None)]
    assert list(exp.raw) == ["inputs", "let", "outputs", "override_map"]


def test_list_items_by_index(load):
    text = ("inputs: {x: [1.0, 2.0]}\noutputs: {y: sum(x)}\n"
            "override_map:\n  - {op: sum, gradient: identity}\n")
    exp = load(text, overrides=["override_map.0.op=Sign", "inputs.x.1=5"])
    assert exp.override_map[0].op == "sign"
    np.testing.assert_array_equal(exp.inputs["x"].value, [1.0, 5.0])


def test_set_values_keep_their_own_location(load, base):
    exp = load(base, overrides=["outputs.y=sum(w)"])
    loc = exp.outputs[0].expr.loc
    assert (loc.path, loc.line) == ("--set outputs.y", 0)


@pytest.mark.parametrize("override, message", [
    ("inputs.x=[1,2", "--set inputs.x: invalid YAML: did not find expected ',' or ']' (while "
                      "parsing a flow sequence)"),
    ("let.s=sign(x", "--set let.s: expected ')' to close the call opened at column 5 (at column "
                     "7 of the --set value 'sign(x')"),
    ("let.s=sign(q)", "--set let.s: undefined name 'q' (at column 6 of the --set value "
                      "'sign(q)')"),
    ("inputs.x={uniform: [1]}", "--set inputs.x.uniform: expected [low, high], got a list of 1"),
    ("inptus.x=1", "--set inptus: unknown key 'inptus' (did you mean 'inputs'?)"),
    ("override_map.sign=identiy", "--set override_map.sign: unknown gradient 'identiy': register "
                                  "it under register, or use a built-in (identity, hardtanh, "
                                  "reverse, zero) (did you mean 'identity'?)"),
    ("outputs.y.z=1", "--set outputs.y.z: outputs.y is a single value, so it has no key 'z'"),
    ("inputs.x.value=1", "--set inputs.x.value: inputs.x is a list; index it with a number, not "
                         "'value'"),
    ("inputs.x.9=1", "--set inputs.x.9: inputs.x has 4 items; there is no item 9"),
    ("train.steps=0", None),
    ("nokey", "--set expects KEY=VALUE with a dotted key such as train.steps=5, got 'nokey'"),
    ("a..b=1", "--set expects KEY=VALUE with a dotted key such as train.steps=5, got 'a..b=1'"),
])
def test_errors_name_the_set_key(override, message, spec_error, base):
    err = spec_error(base, overrides=[override])
    if message is None:  # train.steps=0 also misses the optimizer: whichever, it names --set
        assert str(err).startswith("--set train")
    else:
        assert str(err) == message
    assert err.line is None  # a --set value has no file position


def test_a_spec_error_in_the_file_still_points_at_the_file(spec_error, base):
    err = spec_error(base.replace("sign(x)", "sign(q)"), overrides=["seed=1"])
    assert (err.path, err.line, err.key) == ("spec.yaml", 5, "let.s")


def test_single_string_is_one_override(load, base):
    assert load(base, overrides="seed=4").seed == 4


def test_empty_value_sets_null_which_means_default(load, base):
    assert load("seed: 9\n" + base, overrides=["seed="]).seed == 0


def test_override_cannot_smuggle_python(spec_error, base):
    err = spec_error(base, overrides=["name=!!python/object/apply:os.system [echo hi]"])
    assert "is not supported" in err.bare_message and err.key == "--set name"


@pytest.mark.parametrize("override, name, hint", [
    ("inputs.W=5", "W", " (did you mean 'w'?)"),             # case first, as op names
    ("inputs.W.value=[1, 2, 3, 4]", "W", " (did you mean 'w'?)"),
    ("inputs.ww={value: 1}", "ww", " (did you mean 'w'?)"),
    ("inputs.zzz=1", "zzz", ""),
])
def test_an_input_the_spec_does_not_have_is_an_error_not_a_new_input(override, name, hint,
                                                                       spec_error, base):
    # It used to add a new trainable input that no output used: a silent no-op.
    err = spec_error(base, overrides=[override])
    assert str(err) == (f"--set inputs.{name}: no input {name!r} in the spec (x, w); {override} "
                        "would add one, but --set and sweep keys only change existing inputs"
                        + hint)


def test_a_whole_inputs_section_may_still_be_replaced(load, base):
    exp = load(base.replace("s * w", "s * q"), overrides=["inputs={x: [1.0, 2.0, 3.0, 4.0], "
                                                        "q: [1.0, 1.0, 1.0, 1.0]}"])
    assert list(exp.inputs) == ["x", "q"]
