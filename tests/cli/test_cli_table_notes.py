"""What the table output says under the tables: the run's warnings, and how signs agree counts."""
import json

import numpy as np
from click.testing import CliRunner

from gradcli.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def run(tmp_path, text, *args):
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    return CliRunner().invoke(cli, ["run", str(spec), *args], env=ENV)


def test_the_tables_end_with_the_runs_warnings_and_each_warning_is_printed_once(tmp_path):
    text = ("inputs:\n  w: [1.0, 2.0]\noverride_map:\n  exp: identity\noutputs:\n  loss: w * w\n"
            "train:\n  loss: loss\n  optimizer: {name: sgd, lr: 0.1}\n  steps: 1\n")
    result = run(tmp_path, text)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    # the lint's warning, with its place, on stderr as the spec loads; not again at the end
    printed = (result.stdout + result.stderr).count("'exp' -> 'identity' match")
    assert printed == 1, result.stdout + result.stderr
    assert f"warning: {tmp_path / 's.yaml'}:4:3: override_map.exp: override_map entry 'exp' -> " \
        "'identity' matches no op" in result.stderr
    assert any(line.startswith("warning: train.loss 'loss' has shape (2,), not a scalar")
               for line in lines)


def test_signs_agree_counts_only_elements_without_nan(tmp_path):
    # sqrt'(x) = 0.5 / sqrt(x): NaN for x < 0, so both gradients are NaN at x = -1 and -4
    x = np.array([-1.0, -4.0, 4.0, 1.0])
    text = ("inputs:\n  x: [-1.0, -4.0, 4.0, 1.0]\n  u: [-1.0, -4.0]\n"
            "outputs:\n  y: sum(sqrt(x))\n  z: sum(sqrt(u))\nwrt: [x, u]\n")
    doc = json.loads(run(tmp_path, text, "--format", "json", "--no-numeric").stdout)
    with np.errstate(invalid="ignore"):
        grad = 0.5 / np.sqrt(x)
    finite = ~np.isnan(grad)
    assert doc["gradients"]["y"]["x"]["overridden"][2:] == grad[finite].tolist()
    assert doc["summary"]["y"]["x"]["sign_agreement"] == 1.0  # two signed pairs, both agree
    assert doc["summary"]["z"]["u"]["sign_agreement"] == "NaN"  # all NaN: no signed pair
    table = run(tmp_path, text, "--no-numeric").stdout
    # the one caption serves both rows: it must not read "there are no NaNs" (tryout12)
    assert ("signs agree counts the elements where neither o nor t is NaN (NaN when there is no "
            "such element)") in " ".join(table.split())
    assert "there are none" not in table


def test_json_warnings_hold_the_lint_warnings_with_their_place(tmp_path):
    # They were only on stderr: a JSON reader never learnt that `u` (a typo'd name, say) is unused.
    text = "inputs:\n  x: [1.0, 2.0]\n  u: 3.0\noutputs:\n  y: sum(x * x)\n"
    result = run(tmp_path, text, "--format", "json")
    assert result.exit_code == 0, result.stderr
    said = f"{tmp_path / 's.yaml'}:3:3: inputs.u: no output depends on 'u', so its gradients " \
        "are all unconnected"
    assert json.loads(result.stdout)["warnings"] == [said]
    assert result.stderr == f"warning: {said}\n"
