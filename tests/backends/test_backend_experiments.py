"""Every bundled experiment on every framework: its expect block in float64, the core's numbers in both."""
from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import differences, numpy_run

from gradcli import runner
from gradcli.spec import load_spec

EXPERIMENTS = sorted((Path(__file__).parent.parent.parent / "experiments").glob("*.yaml"))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_experiment_passes_its_expect_block_in_float64(framework, path):
    result = runner.run(load_spec(path, overrides=["dtype=float64"]), backend=framework)
    assert result.backend == framework
    assert result.expect.passed, result.expect.failures
    assert not result.warnings, result.warnings
    assert differences(result, numpy_run(str(path), "float64")) == []


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_experiment_matches_the_numpy_core_in_float32(framework, path):
    experiment = load_spec(path, overrides=["dtype=float32"])
    result = runner.run(experiment, backend=framework)
    reference = numpy_run(str(path), "float32")
    for name, value in result.values.items():
        if getattr(value, "dtype", None) is not None and value.dtype.kind == "f":
            assert value.dtype.name == "float32", name
    for row in result.gradients.values():
        for name, grads in row.items():
            if grads.overridden is not None:
                assert grads.overridden.dtype.name == "float32", name
    assert differences(result, reference) == []
