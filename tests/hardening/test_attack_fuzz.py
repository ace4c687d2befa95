"""Generated attack specs end cleanly: refused with a spec error, or run within their limits.

The specs ask for huge intermediates (outer products, matmul, random draws,
one_hot, fancy indexing, stacking, many live tensors) and exponential graphs;
they run in one child process capped by RLIMIT_AS (limited.py), so a hole in
the budget shows up as a failed allocation in the output, never as a machine
out of memory. GRADCLI_FUZZ_EXAMPLES=20 runs a longer campaign.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from limited import GiB, problems, run_limited

BATCHES = int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "2"))
SIZES = st.sampled_from([1, 2, 7, 1000, 30_000, 200_000, 1_000_000, 10_000_000])
DIMS = st.lists(SIZES, min_size=1, max_size=3)


def _inputs(**shapes) -> str:
    return "inputs:\n" + "".join(f"  {n}: {{ones: {list(s)}}}\n" for n, s in shapes.items())


@st.composite
def attack(draw) -> str:
    kind = draw(st.sampled_from(["outer", "matmul", "random", "one_hot", "index", "stack",
                                 "live", "doubling"]))
    n, m = draw(SIZES), draw(SIZES)
    if kind == "outer":
        op = draw(st.sampled_from(["*", "+", "-", "/", "**", "<", "&"]))
        body = f"a {op} b" if op not in "<&" else f"cast((a > 0) {op} (b > 0), dtype(a))"
        return _inputs(a=[min(n, 10**6), 1], b=[1, min(m, 10**6)]) + f"outputs:\n  y: sum({body})\n"
    if kind == "matmul":
        k = draw(st.sampled_from([1, 3]))
        return _inputs(a=[min(n, 10**6), k], b=[k, min(m, 10**6)]) + "outputs:\n  y: sum(a @ b)\n"
    if kind == "random":
        op = draw(st.sampled_from(["uniform", "normal", "bernoulli"]))
        return _inputs(x=[2]) + f"outputs:\n  y: sum(x) + sum({op}({draw(DIMS)}))\n"
    if kind == "one_hot":
        depth = draw(st.sampled_from([3, 10**6, 10**9, 10**12]))
        return ("inputs:\n  i: {value: [0, 1, 2], dtype: int64}\n  x: [1.0]\n"
                f"outputs:\n  y: sum(x) + sum(one_hot(i, {depth}))\n")
    if kind == "index":
        count = draw(st.sampled_from([1, 50, 500]))
        picks = ", ".join(["0"] * count)
        return _inputs(x=[1, min(n, 10**7)]) + f"outputs:\n  y: sum(x[[{picks}]])\n"
    if kind == "stack":
        copies = draw(st.integers(2, 40))
        return _inputs(x=[min(n, 10**7)]) + f"outputs:\n  y: sum(stack([{', '.join(['x'] * copies)}]))\n"
    if kind == "live":
        count = draw(st.integers(2, 30))
        lets = "".join(f"  c{i}: a * b + {i}\n" for i in range(count))
        return (_inputs(a=[min(n, 20_000), 1], b=[1, min(m, 20_000)]) + "let:\n" + lets
                + f"outputs:\n  y: sum(c{count - 1})\n")
    depth = draw(st.integers(2, 45))
    lines = ["functions:", "  f0: {args: [x], forward: x * 2, gradient: dy * 2}"]
    lines += [f"  f{i}: {{args: [x], forward: f{i - 1}(x) + f{i - 1}(x), gradient: dy}}"
              for i in range(1, depth)]
    return _inputs(a=[2]) + "\n".join(lines) + f"\noutputs:\n  y: sum(f{depth - 1}(a))\n"


@settings(max_examples=BATCHES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(st.lists(st.tuples(attack(), st.sampled_from(["numpy", "numpy", "torch"])),
                min_size=16, max_size=16))
def test_attacks_are_refused_or_run_within_their_limits(tmp_path_factory, batch):
    folder = tmp_path_factory.mktemp("attacks")
    jobs = []
    for i, (text, backend) in enumerate(batch):
        path = folder / f"attack{i}.yaml"
        path.write_text(text)
        jobs.append(["run", "--no-numeric", "--format", "json", "--backend", backend,
                     "--max-memory", "1GiB", str(path)])
    for (text, backend), result in zip(batch, run_limited(jobs, limit_bytes=3 * GiB)):
        assert problems(result) == [], (backend, text[:600], result["stderr"][-2000:])
        if result["exit_code"] == 2:
            assert result["stderr"].startswith("error:"), result["stderr"][-2000:]
