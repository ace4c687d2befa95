"""A schedule whose learning rate leaves float32's range during training (tf.train feeds the
rate as a float32 tensor, and a constant lr beyond float32 is refused at train.optimizer.lr)
is refused at train.schedule, naming the step: gamma ** t past float64's range was an
internal error (Python's OverflowError), and a finite rate beyond float32 was placed at
train.loss. The step is found here with numpy, by spec-v2's formula in float64."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli import runner
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text

SPEC = """
inputs:
  w: [1.5, -0.5, 0.25]
outputs:
  loss: sum(square(w)) * 0
train:
  optimizer: {{name: sgd, lr: {lr}}}
  steps: {steps}
  schedule: {schedule}
"""


def first_step_beyond_float32(lr: float, rate_at) -> int:
    with np.errstate(over="ignore"):
        return next(t for t in range(10_000) if np.isinf(np.float32(lr * rate_at(np.float64(t)))))


@pytest.mark.parametrize("lr, schedule, rate_at", [
    (1e-300, "{exponential: {gamma: 10}}", lambda t: np.float64(10.0) ** t),  # 10.0 ** 309: inf
    (1e30, "{step: {every: 2, gamma: 10}}", lambda t: np.float64(10.0) ** math.floor(t / 2)),
])
def test_a_scheduled_rate_beyond_float32_is_refused_at_the_schedule(backend, lr, schedule,
                                                                    rate_at):
    step = first_step_beyond_float32(lr, rate_at)
    assert step in (309, 18)
    exp = load_spec_text(SPEC.format(lr=lr, steps=step + 3, schedule=schedule), path="spec.yaml")
    with pytest.raises(SpecError) as info:
        runner.run(exp, backend=backend, numeric=False)
    text = str(info.value)
    assert text.startswith("spec.yaml:9:3: train.schedule: "), text
    assert f"at step {step} " in text and "float32" in text


def test_a_rate_that_stays_in_range_trains_every_step():
    exp = load_spec_text(SPEC.format(lr=1e-300, steps=300, schedule="{exponential: {gamma: 10}}"),
                         path="spec.yaml")
    assert len(runner.run(exp, numeric=False).train.loss) == 300
