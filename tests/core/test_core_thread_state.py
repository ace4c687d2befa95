"""The per-thread build state: an origin and a rule's input mask stay in the thread that set them."""
import threading

import numpy as np

import gradcli as gc
from gradcli.core import registry


def _in_thread(fn):
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("value", fn()))
    thread.start()
    thread.join()
    return out["value"]


def test_an_origin_set_in_one_thread_is_not_seen_by_ops_built_in_another():
    x = gc.constant(np.float64(2.0))
    with gc.origin("outer"):
        inside = x * 3.0
        other = _in_thread(lambda: (x * 5.0).op.origin)
        with gc.origin("inner"):
            nested = x + 1.0
        back = x - 1.0
    after = x * 7.0
    assert (inside.op.origin, other, nested.op.origin, back.op.origin, after.op.origin) == \
        ("outer", None, "inner", "outer", None)
    assert _in_thread(lambda: (x * 9.0).op.origin) is None


def test_a_rules_mask_is_seen_only_in_the_walks_thread():
    seen = {}

    @gc.register_gradient("ThreadMaskProbe", replace=True)
    def probe(op, g):
        seen["here"] = registry.needed(op)
        seen["there"] = _in_thread(lambda: registry.needed(op))
        return g * 2.0, None

    x = gc.variable(np.float64(3.0))
    c = gc.constant(np.float64(4.0))
    with gc.gradient_override_map({"mul": "ThreadMaskProbe"}):
        y = x * c
    (dx,) = gc.gradients(y, [x])
    assert seen == {"here": (True, False), "there": (True, True)}
    assert float(gc.evaluate(dx)) == 2.0
