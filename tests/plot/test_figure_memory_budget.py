"""plot curve, plot train and report build tensors under the memory budget, as run does.

The spec asks for a 4000 x 4000 float64 outer product (122 MiB); under
--max-memory 64MiB (32 MiB per tensor) it is refused before it allocates.
"""
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

OUTER = """\
name: mem
inputs: {a: {ones: [4000]}}
outputs:
  y: sum(reshape(a, [4000, 1]) * reshape(a, [1, 4000]))
"""
REFUSAL = ("op 'mul' would make a tensor of shape [4000, 4000] float64 (122 MiB); "
           "the memory budget allows 32 MiB per tensor")


@pytest.mark.parametrize("command", [["plot", "curve", "--points", "2"], ["plot", "train"],
                                     ["report"]])
def test_figure_commands_refuse_a_tensor_past_max_memory(tmp_path, command):
    spec = tmp_path / "mem.yaml"
    spec.write_text(OUTER)
    out = tmp_path / ("page.html" if command == ["report"] else "figure.png")
    result = CliRunner().invoke(cli, [*command, str(spec), "--backend" if command[-1] != "train"
                                      else "--backends", "numpy", "--max-memory", "64MiB",
                                      "--output", str(out)])
    assert result.exit_code == 2, result.output
    assert REFUSAL in " ".join(result.output.split()), result.output
