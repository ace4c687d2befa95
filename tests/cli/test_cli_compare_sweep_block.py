"""compare checks a spec's own `sweep:` block as run and check do (note6's leftover): the same
placed error, exit 2; a good block is ignored and the spec compared as written."""
import json

import numpy as np
import torch
from click.testing import CliRunner

from gradcli.cli import cli

BASE = """\
inputs:
  w: [1.0, 2.0]
outputs:
  loss: sum(w * w * w)
sweep:
  seed: [0, 1]
"""


def invoke(*args):
    return CliRunner().invoke(cli, [*map(str, args)], env={"NO_COLOR": "1", "COLUMNS": "400"})


def test_a_bad_sweep_block_is_refused_with_check_s_error(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(BASE + "  train.optimizer.lrr: [0.1]\n")
    checked = invoke("check", path)
    assert checked.exit_code == 2
    for fmt in ("table", "json"):
        result = invoke("compare", path, "--backends", "numpy,torch", "--format", fmt)
        assert result.exit_code == 2, result.output
        assert f"{path}:7:3:" in result.stderr and "Traceback" not in result.stderr
        assert checked.stderr.strip().splitlines()[0] in result.stderr
    doc = json.loads(invoke("compare", path, "--backends", "numpy,torch", "--format", "json").stdout)
    assert doc["exit_code"] == 2 and doc["error"].startswith(f"{path}:7:3: ")


def test_a_good_sweep_block_is_ignored_and_the_spec_compared(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(BASE + "  inputs.w: [[3.0, 4.0]]\n")
    result = invoke("compare", path, "--backends", "numpy,torch", "--tolerance", "1e-12",
                    "--format", "json")
    assert result.exit_code == 0, result.output
    w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (w * w * w).sum().backward()  # the spec's own w, not the swept one
    for got in json.loads(result.stdout)["rows"][0]["overridden"]:
        np.testing.assert_array_equal(got, w.grad.numpy())
