"""The note for a connected gradient the framework gives None names the ops on the path that
have a zero derivative (tryout8 finding 6: a heaviside spec's note named "round, floor, ceil and
comparisons"). The oracles: torch's and TensorFlow's own autodiff (they do give None there),
and numpy's kernels by finite differences for which ops are steps (connectivity.STEPS).
"""
import numpy as np
import pytest
import tensorflow as tf
import torch

from gradcli import runner
from gradcli.backends.connectivity import STEPS
from gradcli.ops import OPS
from gradcli.spec import load_spec_text

V = [-1.2, -0.1, 0.3, 0.9, 2.0]
SPEC = f"""\
name: spike
inputs:
  v: {V}
  w: [0.5, -1.0, 2.0, 1.5, 3.0]
register:
  SuperSpike: dy / (1 + 10 * abs(x)) ** 2
override_map:
  - {{op: heaviside, gradient: SuperSpike}}
outputs:
  y: sum(heaviside(v - 0.5) * w * w)
  z: sum(cast(v > 0, dtype(v)) * w)
"""


def torch_gives_none(f) -> bool:
    v = torch.tensor(V, dtype=torch.float64, requires_grad=True)
    y = f(v)
    return not y.requires_grad or torch.autograd.grad(y, v, allow_unused=True)[0] is None


def tf_gives_none(f) -> bool:
    v = tf.Variable(V, dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = f(v)
    return tape.gradient(y, v) is None


@pytest.mark.parametrize("on", ["torch", "tensorflow"])
def test_the_note_names_heaviside_and_the_comparison_the_path_goes_through(on):
    w = torch.tensor([0.5, -1.0, 2.0, 1.5, 3.0], dtype=torch.float64)
    assert torch_gives_none(lambda v: torch.sum(torch.where(v - 0.5 > 0, torch.ones_like(v),
                                                            torch.zeros_like(v)) * w * w))
    assert tf_gives_none(lambda v: tf.reduce_sum(tf.cast(v > 0, tf.float64) * w.numpy()))
    result = runner.run(load_spec_text(SPEC, path="spike.yaml"), backend=on, numeric=False)
    notes = {(c.output, c.input): c.text for c in result.conventions if c.topic == "unconnected"}
    assert "the path goes through heaviside, with a zero derivative" in notes[("y", "v")]
    assert "the path goes through greater (>), with a zero derivative" in notes[("z", "v")]
    assert not any(word in text for text in notes.values() for word in ("round", "floor", "ceil"))
    for out in ("y", "z"):  # both steps have derivative 0: gradcli reports zeros, not None
        np.testing.assert_array_equal(result.gradients[out]["v"].true, np.zeros(len(V)))


def test_steps_are_the_unary_ops_whose_derivative_is_zero():
    x = np.array([0.15, 0.35, 0.45, 0.65, 0.85])  # away from every step's jumps
    u = np.array([1.0, -2.0, 3.0, 0.5, 1.5])      # a direction (softmax is flat along ones)
    h = 1e-6
    zero = set()
    for name, spec in OPS.items():
        if spec.family != "unary" or spec.result != "tensor" or not any(spec.gradient):
            continue
        slope = (spec.kernel(x + h * u, **spec.defaults)
                 - spec.kernel(x - h * u, **spec.defaults)) / (2 * h)
        if np.all(slope == 0):
            zero.add(name)
    assert zero == STEPS
