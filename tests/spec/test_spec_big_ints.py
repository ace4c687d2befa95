"""Integers Python cannot print (past 4,300 decimal digits) and YAML 1.1's base-60 numbers:
refused at their place, never an internal error; a seed is a uint64."""
import json

import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.errors import SpecError
from gradcli.spec import load_spec_text
from gradcli.spec.build import MAX_SEED

SPEC = "name: b\nseed: SEED\ninputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n"


def refused(seed, overrides=()):
    with pytest.raises(SpecError) as info:
        load_spec_text(SPEC.replace("SEED", seed), "b.yaml", overrides)
    return str(info.value)


@pytest.mark.parametrize("seed", ["1:30", "-1:30", "1:30:00", "1:30.5"])
def test_a_base_60_number_is_refused_at_its_place(seed):
    message = refused(seed)
    assert message.startswith(f"b.yaml:2:7: {seed!r} is a YAML 1.1 base-60 number"), message


def test_a_quoted_base_60_number_is_text():
    assert "expected an integer" in refused("'1:30'")


def test_a_decimal_past_python_s_digit_limit_is_refused_at_its_place():
    message = refused("1" * 4301)
    assert message.startswith("b.yaml:2:7: this integer has 4,301 digits; a spec's integers "
                              "have at most 4,300"), message[:200]


@pytest.mark.parametrize("seed", ["1" * 4300, "0x" + "f" * 5000, str(MAX_SEED + 1)])
def test_a_seed_past_uint64_is_refused_and_shown_short(seed):
    message = refused(seed)
    assert message.startswith("b.yaml:2:7: seed: expected an integer between 0 and "
                              f"{MAX_SEED}, got "), message[:200]
    assert len(message.splitlines()[0]) < 200


def test_a_huge_seed_through_set_is_refused():
    assert "seed: expected an integer between 0 and" in refused("0", ["seed=0x" + "f" * 4000])


def test_the_largest_seed_runs_and_is_printed(tmp_path):
    spec = tmp_path / "b.yaml"
    spec.write_text(SPEC.replace("SEED", hex(MAX_SEED)))
    done = CliRunner().invoke(cli, ["run", str(spec), "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["seed"] == 2**64 - 1
