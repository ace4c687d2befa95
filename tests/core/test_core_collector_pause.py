"""gc.gradients pauses Python's garbage collector while it builds; with two threads building at
once the collector stays off until the last build ends, and is on again after (review7: the
first build to end re-enabled it under the other's).

The interleaving is forced with events inside two gradient rules, no timing involved.
"""
import gc as python_gc
import threading

import numpy as np

import gradcli as gc


def test_a_build_ending_first_leaves_the_collector_off_under_anothers_and_on_after():
    inside_b, a_ended = threading.Event(), threading.Event()
    seen = {}

    @gc.register_gradient("PauseProbeB", replace=True)
    def probe_b(op, g):  # thread B's build: waits here until A's build has ended
        inside_b.set()
        assert a_ended.wait(60)
        seen["under B after A ended"] = python_gc.isenabled()
        return g, g

    @gc.register_gradient("PauseProbeA", replace=True)
    def probe_a(op, g):  # A's build (this thread): B starts its build inside A's and waits
        thread.start()
        assert inside_b.wait(60)
        seen["under A"] = python_gc.isenabled()
        return g * op.inputs[1], g * op.inputs[0]

    x = gc.variable(np.float64(3.0))
    c = gc.constant(np.float64(4.0))
    with gc.gradient_override_map({"mul": "PauseProbeA", "add": "PauseProbeB"}):
        y_a, y_b = x * c, x + c
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("dx", gc.gradients(y_b, [x])))
    was_enabled = python_gc.isenabled()
    python_gc.enable()
    try:
        (dx_a,) = gc.gradients(y_a, [x])
        seen["between"] = python_gc.isenabled()  # A ended, B still building
        a_ended.set()
        thread.join(60)
        seen["after both"] = python_gc.isenabled()
    finally:
        a_ended.set()
        (python_gc.enable if was_enabled else python_gc.disable)()
    assert seen == {"under A": False, "between": False, "under B after A ended": False,
                    "after both": True}
    assert float(gc.evaluate(dx_a)) == 4.0 and float(gc.evaluate(out["dx"][0])) == 1.0
