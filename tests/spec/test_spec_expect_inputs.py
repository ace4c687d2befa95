"""expect.values naming an input (docs/spec.md: "an input, let or output") compares with the
input's value as the spec gives or draws it, before any training (hostile8: every input was
"got null (no gradient)", since the run's values hold only lets and outputs).

The oracle: the literal in the spec, and numpy's own draw for a seeded input
(np.random.default_rng([seed, crc32(name)]), the derivation spec/inputs.py documents).
"""
import json
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """\
name: e
backend: {backend}
seed: 3
inputs:
  x: [1.0, 2.0]
  u: {{uniform: [-1, 1], shape: [3], trainable: false}}
let:
  z: x * 2
outputs:
  y: sum(x * x) + sum(u)
train:
  loss: y
  optimizer: {{name: sgd, lr: 0.1}}
  steps: 2
expect:
  values: {values}
"""


def drawn_u() -> np.ndarray:
    return np.random.default_rng([3, zlib.crc32(b"u")]).uniform(-1, 1, size=3)


def invoke(tmp_path, backend: str, values: str):
    path = tmp_path / "e.yaml"
    path.write_text(SPEC.format(backend=backend, values=values))
    return CliRunner().invoke(cli, ["run", str(path), "--format", "json", "--no-numeric"],
                              env={"NO_COLOR": "1"})


def flow(array) -> str:
    return "[" + ", ".join(repr(float(v)) for v in np.asarray(array)) + "]"


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_an_input_is_expected_at_its_given_or_drawn_value_before_training(tmp_path, backend):
    x = np.array([1.0, 2.0])
    lr = float(np.float32(0.1))  # docs/training.md: the rate is rounded through float32
    trained = x * (1 - lr * 2) ** 2  # two sgd steps on sum(x*x): x moves, its value does not
    result = invoke(tmp_path, backend, f"{{x: {flow(x)}, u: {flow(drawn_u())}, z: {flow(2 * x)}}}")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert doc["expect"] == {"passed": True, "failures": [], "declared": True}
    assert np.allclose(doc["train"]["params"]["x"], trained, rtol=1e-12, atol=0)


def test_a_wrong_input_value_fails_with_the_value_the_input_has(tmp_path):
    u = drawn_u()
    result = invoke(tmp_path, "numpy", f"{{u: {flow(u + 0.5)}}}")
    assert result.exit_code == 1, result.output
    (failure,) = json.loads(result.stdout)["expect"]["failures"]
    shown = np.array2string(u, precision=6, threshold=8)
    assert failure == (f"values.u: expected {np.array2string(u + 0.5, precision=6, threshold=8)}, "
                       f"got {shown} (max |diff| 0.5; rtol 1e-06, atol 1e-09)")
    assert "no gradient" not in result.output
