"""`gradcli run A B C` (tables) prints each spec's tables as it finishes and then keeps only
what the summary line and the exit code read: a spec's tensors are freed before the next
spec runs, so many specs on one command line cost one run's memory, not the sum."""
import gc
import weakref

import pytest
from click.testing import CliRunner

from gradcli import runner
from gradcli.cli import cli

SPEC = "name: NAME\ninputs:\n  x: [1.0, 2.0, 3.0]\noutputs:\n  y: x * x\nEXPECT"


@pytest.mark.parametrize("args", [[], ["-q"]])
def test_a_shown_spec_s_tensors_are_freed_before_the_next_runs(tmp_path, monkeypatch, args):
    real, alive = runner.run, []

    def watched(*a, **k):
        gc.collect()
        alive.append(sum(ref() is not None for ref in refs))
        result = real(*a, **k)
        refs.append(weakref.ref(result.values["y"]))
        return result
    refs = []
    monkeypatch.setattr(runner, "run", watched)
    paths = []
    for i, expect in enumerate(["", "expect: {values: {y: [1.0, 4.0, 9.0]}}\n",
                                "expect: {values: {y: [0.0, 0.0, 0.0]}}\n"]):
        path = tmp_path / f"s{i}.yaml"
        path.write_text(SPEC.replace("NAME", f"s{i}").replace("EXPECT", expect))
        paths.append(str(path))
    done = CliRunner().invoke(cli, ["run", *paths, *args])
    assert alive == [0, 0, 0]  # no earlier spec's values alive when the next one starts
    assert done.exit_code == 1  # s2's expect fails; the summary still counts every spec
    if args:
        assert "1 passed, 1 failed, 1 ran (nothing to check)" in done.stderr
