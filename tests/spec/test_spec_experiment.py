"""The Experiment a valid spec becomes: defaults, sections and the spec-v1 example."""
from __future__ import annotations

import numpy as np
import pytest
from spec_samples import SPEC_V1_EXAMPLE

from gradcli.spec import ClipSpec, load_spec


def test_the_spec_v1_example_loads(tmp_path):
    path = tmp_path / "ste.yaml"
    path.write_text(SPEC_V1_EXAMPLE)
    exp = load_spec(path)
    assert (exp.name, exp.backend, exp.dtype, exp.seed, exp.path) == (
        "ste-sign", "numpy", "float64", 0, str(path))
    assert list(exp.inputs) == ["x", "w", "u", "r", "labels"]
    assert [s.trainable for s in exp.inputs.values()] == [True, True, False, False, False]
    assert exp.lets[1].names == ("zeroed", "index")
    assert exp.wrt == ("x", "w") and exp.stop_gradients == ("s",)
    assert exp.train.clip == ClipSpec("norm", 5.0) and exp.train.hyper == {"lr": 0.1}
    np.testing.assert_array_equal(exp.expect.true_gradients["y"]["w"],
                                  [-1, -1, -1, 0, 1, 1, 1])
    assert exp.grad_ys["y"].dtype == np.float64 and exp.grad_ys["y"] == 1.0
    assert exp.raw["override_map"] == {"sign": "QuantizeGrad"}
    assert exp.outputs[0].expr.loc.line == 19 and exp.outputs[0].expr.loc.column == 6


def test_defaults(load):
    exp = load("inputs:\n  a: 1.0\n  b: {value: 2.0, trainable: false}\n  c: 3.0\n"
               "outputs:\n  y: a * b * c\n", path="dir/my_spec.yaml")
    assert (exp.name, exp.description, exp.backend, exp.dtype, exp.seed) == (
        "my_spec", "", "numpy", "float64", 0)
    assert exp.wrt == ("a", "c")                      # trainable inputs, in order
    assert exp.unconnected == "none" and exp.train is None and exp.expect is None
    assert exp.register == {} and exp.override_map == () and exp.functions == {}
    assert exp.stop_gradients == () and exp.grad_ys == {}


def test_null_sections_are_empty(load):
    exp = load("inputs:\n  a: 1.0\nlet:\nregister:\noverride_map:\noutputs:\n  y: a\nwrt:\n")
    assert exp.lets == () and exp.wrt == ("a",)


@pytest.mark.parametrize("optimizer, hyper", [
    ("{name: sgd, lr: 0.5}", {"lr": 0.5}),
    ("{name: momentum, lr: 0.5}", {"lr": 0.5, "momentum": 0.9, "nesterov": False}),
    ("{name: momentum, lr: 0.5, momentum: 0.5, nesterov: true}",
     {"lr": 0.5, "momentum": 0.5, "nesterov": True}),
    ("{name: adam, lr: 1e-3}", {"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
])
def test_optimizer_defaults(optimizer, hyper, load):
    exp = load(f"inputs: {{a: 1.0}}\noutputs: {{y: a * a}}\ntrain: {{optimizer: {optimizer}}}\n")
    assert exp.train.optimizer == optimizer.split(",")[0].split()[-1]
    assert exp.train.hyper == hyper
    assert exp.train.loss == "y" and exp.train.steps == 1 and exp.train.clip is None


def test_train_needs_a_loss_name_when_there_are_several_outputs(spec_error):
    err = spec_error("inputs: {a: 1.0}\noutputs: {y: a, z: a}\n"
                     "train: {optimizer: {name: sgd, lr: 1}}\n")
    assert "missing the required key 'loss'" in str(err)


def test_train_needs_something_trainable(spec_error):
    err = spec_error("inputs: {a: {value: 1.0, trainable: false}}\noutputs: {y: a}\n"
                     "train: {optimizer: {name: sgd, lr: 1}}\n")
    assert "no input is trainable" in str(err)


def test_clip_value(load):
    exp = load("inputs: {a: 1.0}\noutputs: {y: a}\n"
               "train: {optimizer: {name: sgd, lr: 1}, clip: {value: [-1, 1]}, steps: 3}\n")
    assert exp.train.clip == ClipSpec("value", (-1.0, 1.0)) and exp.train.steps == 3


def test_expect(load):
    exp = load("inputs: {a: [1.0, 2.0], b: [3.0, 4.0]}\nlet: {m: a > 1}\noutputs: {y: sum(a)}\n"
               "train: {optimizer: {name: sgd, lr: 1}, steps: 3}\n"
               "expect:\n"
               "  values: {y: 3, m: [false, true], a: [1, NaN]}\n"
               "  gradients: {y: {a: [1, 1], b: null}}\n"
               "  train: {params: {a: [0, 1]}, loss: [3.0, .nan, Infinity]}\n"
               "  tolerance: {atol: 1e-5}\n")
    e = exp.expect
    assert e.values["m"].dtype == np.bool_ and e.values["y"] == 3.0
    assert np.isnan(e.values["a"][1])
    assert e.gradients == {"y": {"a": e.gradients["y"]["a"], "b": None}}
    assert e.true_gradients == {}
    np.testing.assert_array_equal(e.train_params["a"], [0.0, 1.0])
    assert e.train_loss[0] == 3.0 and np.isnan(e.train_loss[1]) and e.train_loss[2] == np.inf
    assert (e.rtol, e.atol) == (1e-6, 1e-5)


def test_grad_ys_take_the_spec_dtype(load):
    exp = load("dtype: float32\ninputs: {a: [1.0, 2.0]}\noutputs: {y: a * 2}\n"
               "grad_ys: {y: [1, 0.5]}\n")
    assert exp.grad_ys["y"].dtype == np.float32


def test_experiment_is_plain_data(load, base):
    exp = load(base)
    with pytest.raises(AttributeError):
        exp.name = "other"
    with pytest.raises(AttributeError):
        del exp.inputs
    assert exp._fields[:3] == ("name", "description", "path")
