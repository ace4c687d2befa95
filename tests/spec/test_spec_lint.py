"""Static warnings: overrides that match nothing, unused gradients and functions, unconnected wrt."""
from __future__ import annotations

from spec_samples import BASE

from gradcli.spec import LintWarning, lint


def messages(exp) -> list[str]:
    return [str(w) for w in lint(exp)]


def test_a_clean_spec_has_no_warnings(load):
    exp = load(BASE + "register: {Q: 'where(abs(x) <= 1, dy, 0)'}\noverride_map: {Sign: Q}\n")
    assert lint(exp) == []


def test_global_override_matching_no_op(load):
    exp = load(BASE + "register:\n  QuantizeGrad: dy\noverride_map:\n  round: QuantizeGrad\n")
    assert messages(exp) == [
        "spec.yaml:11:3: override_map.round: override_map entry 'round' -> 'QuantizeGrad' "
        "matches no op: no round op is built (the most common silent no-op of "
        "gradient_override_map)"]
    warning = lint(exp)[0]
    assert isinstance(warning, LintWarning) and warning.key == "override_map.round"


def test_scoped_override_matching_no_op_in_its_scope(load):
    # sign is built for s, not for y itself: scopes do not reach into earlier lets.
    exp = load(BASE + "override_map:\n  - {op: sign, gradient: identity, scope: [y]}\n"
                      "  - {op: mul, gradient: identity, scope: [y]}\n")
    assert messages(exp) == [
        "spec.yaml:9:5: override_map[0]: override_map entry 'sign' -> 'identity' matches no op: "
        "no sign op is built while computing y (the most common silent no-op of "
        "gradient_override_map)"]


def test_ops_inside_called_functions_never_run_their_override(load):
    # f's own gradient replaces round's (tryout10 F8): the entry never runs, as TensorFlow's
    # gradient_override_map inside a tf.custom_gradient forward never does
    text = BASE.replace("sign(x)", "f(x)") + (
        "functions:\n  f:\n    args: [a]\n    forward: round(a)\n    gradient: dy\n"
        "override_map:\n  - {op: round, gradient: identity, scope: [s]}\n")
    assert messages(load(text)) == [
        "spec.yaml:14:5: override_map[0]: override_map entry 'round' -> 'identity' matches no "
        "op: its round ops while computing s are all inside the forward of function f, whose "
        "own gradient replaces theirs (as tf.custom_gradient's does), so it never runs"]
    beside = text.replace("f(x)", "f(x) + round(x)")  # one round op outside f: it counts
    assert lint(load(beside)) == []


def test_unused_registered_gradient(load):
    exp = load(BASE + "register:\n  Unused: dy\n")
    assert messages(exp) == ["spec.yaml:9:3: register.Unused: registered gradient 'Unused' is "
                             "used by no override_map entry, so it never runs"]


def test_uncalled_function(load):
    exp = load(BASE + "functions:\n  f:\n    args: [a]\n    forward: a\n    gradient: dy\n")
    assert messages(exp) == ["spec.yaml:9:3: functions.f: function 'f' is never called"]


def test_unconnected_wrt(load):
    exp = load(BASE.replace("sum(s * w)", "sum(w)"))
    assert messages(exp) == ["spec.yaml:2:3: inputs.x: no output depends on 'x', so its "
                             "gradients are all unconnected"]
    explicit = load(BASE.replace("sum(s * w)", "sum(w)") + "wrt: [x, w]\n")
    assert [w.key for w in lint(explicit)] == ["wrt"]


def test_an_explicit_unconnected_setting_silences_the_unconnected_warning(load):
    for mode in ("none", "zero"):
        exp = load(BASE.replace("sum(s * w)", "sum(w)") + f"unconnected: {mode}\n")
        assert lint(exp) == []


def test_stop_gradients_cut_the_dependency(load):
    assert lint(load(BASE)) == []
    assert [w.key for w in lint(load(BASE + "stop_gradients: [s]\n"))] == ["inputs.x"]


def test_warnings_from_set_values_name_the_set_key(load):
    exp = load(BASE, overrides=["override_map.abs=identity"])
    assert messages(exp) == [
        "--set override_map.abs: override_map entry 'abs' -> 'identity' matches no op: no abs op "
        "is built (the most common silent no-op of gradient_override_map)"]
