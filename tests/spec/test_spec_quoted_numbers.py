"""One rule for a quoted numeral at every numeric key (tryout10 F3): "0.1" is a string, refused
where it is written (file:line:col, the key, "write the number without quotes"), by `check`
as by `run`, exit 2; the same spec unquoted loads with the numbers as written. Expressions
stay strings, and `--set`/sweep values follow the same rule."""
import pytest
from click.testing import CliRunner

from gradcli.cli import cli

SPEC = """\
name: q
seed: {seed}
inputs:
  x: [{x0}, 2.0]
  v: {{value: {v}}}
  u: {{uniform: [{lo}, 1], shape: [{n}]}}
let:
  c: "2.0"
outputs:
  y: sum(x) * v + sum(u) * c
grad_ys: {{y: {gy}}}
train: {{loss: y, steps: {steps}, optimizer: {{name: momentum, lr: {lr}, momentum: 0.9}}}}
"""
PLAIN = dict(seed="3", x0="1.0", v="2.5", lo="-1", n="2", gy="1.0", steps="2", lr="0.1")
# key: (spec key, line, column of the opening quote)
WHERE = {"seed": ("seed", 2, 7), "x0": ("inputs.x", 4, 7), "v": ("inputs.v.value", 5, 14),
         "lo": ("inputs.u.uniform", 6, 17), "n": ("inputs.u.shape", 6, 33),
         "gy": ("grad_ys.y", 11, 14), "steps": ("train.steps", 12, 25),
         "lr": ("train.optimizer.lr", 12, 60)}


def invoke(args):
    return CliRunner().invoke(cli, args, env={"NO_COLOR": "1", "COLUMNS": "200"})


def write(tmp_path, **quoted):
    path = tmp_path / "q.yaml"
    path.write_text(SPEC.format(**{**PLAIN, **quoted}))
    return str(path)


def test_the_spec_unquoted_loads_with_its_numbers(tmp_path, load):
    experiment = load(SPEC.format(**PLAIN))
    assert experiment.seed == 3
    assert experiment.train.hyper["lr"] == 0.1 and experiment.train.steps == 2
    assert experiment.inputs["x"].value.tolist() == [1.0, 2.0]
    assert experiment.inputs["v"].value.tolist() == 2.5
    assert experiment.inputs["u"].value.shape == (2,) and experiment.grad_ys["y"] == 1.0
    assert invoke(["check", write(tmp_path)]).exit_code == 0


@pytest.mark.parametrize("name", sorted(WHERE))
@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_quoted_numeral_is_refused_at_every_numeric_key(tmp_path, name, command, quote):
    written = PLAIN[name]
    result = invoke([command, write(tmp_path, **{name: f"{quote}{written}{quote}"})])
    key, line, column = WHERE[name]
    assert result.exit_code == 2, result.output
    assert (f"q.yaml:{line}:{column}: {key}: expected a number, got the string {written!r} "
            f"(quoted) (write the number without quotes)") in result.output
    assert "Traceback" not in result.output


def test_a_numeral_in_a_block_string_is_refused_too(spec_error):
    error = spec_error("inputs:\n  x: [1.0]\noutputs:\n  y: sum(x)\nseed: |\n  3\n")
    assert error.key == "seed" and "(a block string)" in str(error)


def test_data_test_share_quoted_is_refused(spec_error):
    error = spec_error("data: {load: {dataset: iris}, features: x, labels: k, test: '0.25'}\n"
                       "inputs: {w: {zeros: [4, 3]}}\noutputs: {y: sum(x @ w)}\n"
                       "train: {loss: y, epochs: 1, batch_size: 8, optimizer: {name: sgd, lr: 0.1}}\n")
    assert error.key == "data.test" and "(quoted)" in str(error), str(error)


def test_set_takes_the_shells_unquoted_number_and_refuses_a_quoted_one(tmp_path, load):
    text = SPEC.format(**PLAIN)
    assert load(text, overrides=["train.optimizer.lr=0.25"]).train.hyper["lr"] == 0.25
    result = invoke(["check", write(tmp_path), "--set", 'train.optimizer.lr="0.25"'])
    assert result.exit_code == 2, result.output
    assert ("--set train.optimizer.lr: expected a number, got the string '0.25' (quoted)"
            in result.output)


def test_a_quoted_sweep_value_is_refused_at_its_place(tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text(SPEC.format(**PLAIN) + "sweep:\n  train.optimizer.lr: [0.01, '0.1']\n")
    result = invoke(["check", str(path)])
    assert result.exit_code == 2, result.output
    assert ("q.yaml:14:30: train.optimizer.lr: expected a number, got the string '0.1' "
            "(quoted)") in result.output
    result = invoke(["sweep", str(path), "--param", "train.optimizer.lr=0.01,0.1",
                     "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output  # the --param values replace the quoted list


def test_quoted_json_spellings_of_nonfinite_numbers_stay_accepted(load):
    experiment = load("inputs:\n  x: ['NaN', '-Infinity', 1.0]\noutputs:\n  y: sum(x)\n")
    values = experiment.inputs["x"].value.tolist()
    assert values[0] != values[0] and values[1] == float("-inf") and values[2] == 1.0
