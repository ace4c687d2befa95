"""Sweep limits applied before anything is made or loaded: --seeds is bounded before its
values exist, and a sweep's run count and check work before any swept value is loaded."""
import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.errors import GradcliError
from gradcli.spec import sweepcheck
from gradcli.sweep.grid import parse_seeds

SPEC = """\
inputs:
  w: {value: [1.0, 2.0]}
outputs:
  loss: sum(w * w)
sweep:
"""


@pytest.mark.parametrize("text", ["10001", "20000000", "0:100000000000000000000000",
                                  "5:10006"])
def test_seeds_past_the_values_limit_are_refused_before_they_are_made(text):
    with pytest.raises(GradcliError, match="seeds; the limit is 10000 values of one swept key"):
        parse_seeds(text)


def test_seeds_at_the_limit_are_a_range():
    assert parse_seeds("5:10005") == range(5, 10005)


def _cli(tmp_path, block: str, *args):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC + block)
    return CliRunner().invoke(cli, [*args[:1], str(path), *args[1:]])


def test_sweep_refuses_seeds_at_exit_2(tmp_path):
    result = _cli(tmp_path, "  name: [a]\n", "sweep", "--seeds", "0:100000000000000000000000")
    assert result.exit_code == 2
    assert "gives 100000000000000000000000 seeds; the limit is 10000" in result.output


# 50 x 50 x 50 = 125,000 runs, and the first value of the first key is bad: the run count is
# refused first, without loading the spec once per value.
GRID = "".join(f"  expect.tolerance.{k}: [{'abc, ' if k == 'atol' else ''}"
               f"{', '.join(str(i) for i in range(50 - (k == 'atol')))}]\n"
               for k in ("atol", "rtol")) + f"  seed: [{', '.join(map(str, range(50)))}]\n"


@pytest.mark.parametrize("command", ["check", "sweep"])
def test_the_run_count_is_refused_before_any_value_is_checked(tmp_path, command):
    result = _cli(tmp_path, GRID, command)
    assert result.exit_code == 2
    assert "the sweep has 125000 runs; the limit is 100000" in result.output
    assert "abc" not in result.output.splitlines()[0]


def test_checking_is_bounded_by_the_spec_text_it_would_load(tmp_path, monkeypatch):
    monkeypatch.setattr(sweepcheck, "MAX_CHECK_TEXT", 200)  # the spec is ~90 characters
    result = _cli(tmp_path, "  seed: [0, 1, 2]\n", "check")
    assert result.exit_code == 2, result.output
    assert "checking the sweep's values loads the spec once per value: 3 loads of" \
        in result.output and "the limit is 200 characters of spec text in all" in result.output
