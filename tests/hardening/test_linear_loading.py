"""Loading is linear in the number of lets and functions: work is counted, not timed.

The count is the number of Python line events inside gradcli/spec while a spec
loads (every loop iteration is one), so it does not depend on the machine.
"""
from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

import gradcli.spec
from gradcli.spec import load_spec_text

SPEC_PACKAGE = str(Path(gradcli.spec.__file__).parent)


class TooMuchWork(Exception):
    """Raised from the tracer once loading has clearly stopped being linear."""


def counted_load(text: str, cap: int) -> int:
    """Load `text`; return how many lines of gradcli/spec ran (stopping past `cap`)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if count > cap:
                raise TooMuchWork(f"more than {cap} lines ran")
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(SPEC_PACKAGE) else None

    sys.settrace(tracer)
    try:
        load_spec_text(text, path="lets.yaml")
    finally:
        sys.settrace(None)
    return count


def chain_of_lets(n: int) -> str:
    lines = ["inputs:", "  x: [1.0, 2.0]", "let:", "  l0: x * 2"]
    lines += [f"  l{i}: l{i - 1} + 1" for i in range(1, n)]
    return "\n".join(lines + ["outputs:", f"  y: sum(l{n - 1})", ""])


def chain_of_functions(n: int) -> str:
    lines = ["inputs:", "  x: [1.0, 2.0]", "functions:",
             "  f0: {args: [a], forward: a * 2, gradient: dy}"]
    lines += [f"  f{i}: {{args: [a], forward: f{i - 1}(a) + 1, gradient: dy}}" for i in range(1, n)]
    return "\n".join(lines + ["outputs:", f"  y: sum(f{n - 1}(x))", ""])


@pytest.mark.parametrize("make, n", [(chain_of_lets, 10_000), (chain_of_functions, 2_000)])
def test_twice_the_names_take_about_twice_the_work(make, n):
    # 20,000 lets (10,000 then twice that); functions are longer, so fewer fit in 1 MiB.
    small = counted_load(make(n), cap=50_000_000)
    # Quadratic loading (each let copied the names before it) does ~4x the work here;
    # the cap stops it early instead of letting it run for minutes.
    large = counted_load(make(2 * n), cap=3 * small)
    assert large < 2.2 * small, (small, large)


def _load_peak(text: str) -> int:
    """Peak bytes Python allocated while loading `text` (tracemalloc: machine-independent)."""
    tracemalloc.start()
    try:
        load_spec_text(text, path="lets.yaml")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_chain_of_lets_loads_in_linear_memory():
    # Each let reading the one before: a table of every let's transitive dependencies held
    # n**2/2 names (~4x the memory for twice the lets; 90 MB at 2,000, GBs at 20,000).
    load_spec_text(chain_of_lets(10), path="warm.yaml")  # imports and caches out of the count
    small, large = _load_peak(chain_of_lets(1_000)), _load_peak(chain_of_lets(2_000))
    assert large < 2.5 * small, (small, large)
    assert large < 20_000_000, large
