"""Every bundled experiment runs on the numpy core and meets its expect block."""
from pathlib import Path

import pytest

from gradcli import runner
from gradcli.spec import load_spec

EXPERIMENTS = sorted((Path(__file__).parent.parent / "experiments").glob("*.yaml"))


def test_there_is_one_experiment_per_seed_example():
    assert len(EXPERIMENTS) >= 12


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_experiment_meets_its_expectations(path):
    experiment = load_spec(path)
    assert experiment.description.strip(), "every experiment explains itself"
    assert experiment.expect is not None, "every experiment is a regression test"
    result = runner.run(experiment)
    assert result.expect.passed, result.expect.failures
    assert not result.warnings, result.warnings
