"""A pool worker that a SIGTERM (the client's _stop_pool, a kill of the process group) or a
Ctrl-C reaches while it starts, before its own handlers are set, ends without a traceback
(review7 saw one from a just-started worker and could not reproduce it).

The window is hit on purpose: the worker's start-up sends itself the signal first. It runs in
a fresh Python, as the CLI does: there the pool's "Exception in initializer" log reaches stderr
(pytest's own logging would swallow it).
"""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parent.parent.parent
SCRIPT = """\
import json, os, signal, sys
from gradcli import render
from gradcli.cli_common import raise_terminated
from gradcli.sweep import execute

start = execute._pool_start

def stopped_while_starting(*args):  # the signal lands before the worker's handlers are set
    os.kill(os.getpid(), int(sys.argv[1]))
    start(*args)

execute._pool_start = stopped_while_starting
signal.signal(signal.SIGTERM, raise_terminated)  # the client's, as sweep sets it
spec = "name: sq\\ninputs:\\n  x: [1.0, 2.0]\\noutputs:\\n  y: sum(x * x)\\n"
runs = execute.pool_runs([("0", {}), ("1", {})], 2, spec, "sq.yaml", render.to_json, False)
print(json.dumps([[doc.get("error"), text and json.loads(text)["values"]["y"]]
                  for doc, text in runs]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_reaching_a_starting_worker_leaves_no_traceback(sig):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(int(sig))], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception in initializer" not in done.stderr, \
        done.stderr
    outcomes = json.loads(done.stdout)
    if sig == signal.SIGINT:  # a worker ignores Ctrl-C (the client handles it): both runs done
        assert outcomes == [[None, float(np.sum(np.square([1.0, 2.0])))]] * 2
    else:  # SIGTERM ends a worker, as _stop_pool needs it to: its runs failed, and say so
        assert outcomes and all("the worker running it failed" in error for error, _ in outcomes)


def test_a_worker_dying_while_runs_are_sent_fails_the_unsent_runs_without_a_traceback(monkeypatch):
    # A SIGTERM that ends a worker while the client still submits breaks the pool: the next
    # submit raises BrokenProcessPool (a clean-clone CI saw it as a traceback). Made certain
    # here: the second submit finds the pool broken.
    from concurrent.futures.process import BrokenProcessPool

    from gradcli import render
    from gradcli.sweep import execute

    class BreaksOnSecondSubmit(execute.ProcessPoolExecutor):
        sent = 0

        def submit(self, *args, **kwargs):
            BreaksOnSecondSubmit.sent += 1
            if BreaksOnSecondSubmit.sent == 2:
                raise BrokenProcessPool("A child process terminated abruptly")
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(execute, "ProcessPoolExecutor", BreaksOnSecondSubmit)
    spec = "name: sq\ninputs:\n  x: [1.0, 2.0]\noutputs:\n  y: sum(x * x)\n"
    runs = list(execute.pool_runs([("0", {}), ("1", {})], 2, spec, "sq.yaml", render.to_json,
                                  False))
    by_run = {doc["run"]: (doc, text) for doc, text in runs}
    assert sorted(by_run) == ["0", "1"]
    assert by_run["0"][0].get("error") is None
    assert json.loads(by_run["0"][1])["values"]["y"] == float(np.sum(np.square([1.0, 2.0])))
    failed_doc, text = by_run["1"]
    assert text is None and failed_doc["exit_code"] == 2 and failed_doc["failure"] == "error"
    assert "the worker running it failed: BrokenProcessPool" in failed_doc["error"]
