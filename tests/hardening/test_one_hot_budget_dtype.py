"""one_hot's result is float in the spec's dtype, not its integer indices' dtype: the memory
budget sizes it (and names it) so on the numpy core as on the eager backends (tryout10 F8;
the core named int64, twice a float32 result). Sizes computed here from the shape."""
import numpy as np
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """\
dtype: {dtype}
inputs:
  k: {{value: [0, 1], dtype: int64}}
  x: [1.0]
outputs:
  y: sum(one_hot(k, 1000000000)) + sum(x)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_refused_one_hot_is_named_and_sized_in_the_result_dtype(tmp_path, dtype):
    path = tmp_path / "oh.yaml"
    path.write_text(SPEC.format(dtype=dtype))
    gib = 2 * 10**9 * np.dtype(dtype).itemsize / 2**30
    result = CliRunner().invoke(cli, ["run", "--no-numeric", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert (f"op 'one_hot' would make a tensor of shape [2, 1000000000] {dtype} ({gib:.3g} GiB)"
            in " ".join(result.output.split())), result.output
    assert "int64" not in result.output.split("\n")[0]
