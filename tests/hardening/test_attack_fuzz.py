"""Generated attack specs end cleanly: refused with a spec error, or run within their limits.

The specs ask for huge intermediates (outer products, matmul, random draws,
one_hot, fancy indexing, stacking, many live tensors) and exponential graphs.
They run in one child process capped by RLIMIT_AS and a per-spec alarm
(limited.py), so a hole in a limit shows up as a failed allocation or a
timeout in the output, never as a machine out of memory. An attack that is
past a limit by construction must be refused by that limit, by name.
GRADCLI_FUZZ_EXAMPLES=20 runs a longer campaign.
"""
from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from limited import GiB, problems, run_limited

BATCHES = int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "2"))
BUDGET = GiB                       # --max-memory for every attack; one tensor may take half
PER_TENSOR = BUDGET // 2
MEMORY, OPS = "the memory budget allows", "ops per spec"
SIZES = st.sampled_from([1, 2, 7, 1000, 30_000, 200_000, 1_000_000, 10_000_000])
DIMS = st.lists(SIZES, min_size=1, max_size=3)


def _inputs(**shapes) -> str:
    return "inputs:\n" + "".join(f"  {n}: {{ones: {list(s)}}}\n" for n, s in shapes.items())


def _memory(elements: int) -> str | None:
    """The refusal an op of this many float64 elements must meet (None: it may run)."""
    return MEMORY if elements * 8 > PER_TENSOR else None


@st.composite
def attack(draw) -> tuple[str, str | None]:
    """(spec text, the refusal it must get or None)."""
    kind = draw(st.sampled_from(["outer", "matmul", "random", "one_hot", "index", "stack",
                                 "live", "doubling"]))
    n, m = min(draw(SIZES), 10**6), min(draw(SIZES), 10**6)
    if kind == "outer":
        op = draw(st.sampled_from(["*", "+", "-", "/", "**", "<", "&"]))
        body = f"a {op} b" if op not in "<&" else f"cast((a > 0) {op} (b > 0), dtype(a))"
        return (_inputs(a=[n, 1], b=[1, m]) + f"outputs:\n  y: sum({body})\n",
                _memory(n * m // (8 if op in "<&" else 1)))
    if kind == "matmul":
        k = draw(st.sampled_from([1, 3]))
        return _inputs(a=[n, k], b=[k, m]) + "outputs:\n  y: sum(a @ b)\n", _memory(n * m)
    if kind == "random":
        op, dims = draw(st.sampled_from(["uniform", "normal", "bernoulli"])), draw(DIMS)
        return (_inputs(x=[2]) + f"outputs:\n  y: sum(x) + sum({op}({dims}))\n",
                _memory(math.prod(dims)))
    if kind == "one_hot":
        depth = draw(st.sampled_from([3, 10**6, 10**9, 10**12]))
        return ("inputs:\n  i: {value: [0, 1, 2], dtype: int64}\n  x: [1.0]\n"
                f"outputs:\n  y: sum(x) + sum(one_hot(i, {depth}))\n", _memory(3 * depth))
    if kind == "index":
        count, width = draw(st.sampled_from([1, 50, 500])), min(draw(SIZES), 10**7)
        picks = ", ".join(["0"] * count)
        return (_inputs(x=[1, width]) + f"outputs:\n  y: sum(x[[{picks}]])\n",
                _memory(count * width))
    if kind == "stack":
        copies, width = draw(st.integers(2, 40)), min(draw(SIZES), 10**7)
        return (_inputs(x=[width]) + f"outputs:\n  y: sum(stack([{', '.join(['x'] * copies)}]))\n",
                _memory(copies * width))
    if kind == "live":
        count, n, m = draw(st.integers(2, 30)), min(n, 20_000), min(m, 20_000)
        lets = "".join(f"  c{i}: a * b + {i}\n" for i in range(count))
        # Each let holds a product and a sum: past the total long before the last one.
        over = _memory(n * m) or (MEMORY if 2 * count * n * m * 8 > BUDGET else None)
        return (_inputs(a=[n, 1], b=[1, m]) + "let:\n" + lets
                + f"outputs:\n  y: sum(c{count - 1})\n", over)
    depth = draw(st.integers(2, 45))
    lines = ["functions:", "  f0: {args: [x], forward: x * 2, gradient: dy * 2}"]
    lines += [f"  f{i}: {{args: [x], forward: f{i - 1}(x) + f{i - 1}(x), gradient: dy}}"
              for i in range(1, depth)]
    # f_k builds 5 * 2**k - 2 ops (forward, gradients, custom-gradient ops); sum adds one.
    return (_inputs(a=[2]) + "\n".join(lines) + f"\noutputs:\n  y: sum(f{depth - 1}(a))\n",
            OPS if 5 * 2 ** (depth - 1) - 1 > 100_000 else None)


# No shrinking: each example is a child process running 16 specs, and the failing spec is
# already named in the assertion message.
@settings(max_examples=BATCHES, deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(st.lists(st.tuples(attack(), st.sampled_from(["numpy", "numpy", "torch"])),
                min_size=16, max_size=16))
def test_attacks_are_refused_or_run_within_their_limits(tmp_path_factory, batch):
    folder = tmp_path_factory.mktemp("attacks")
    jobs = []
    for i, ((text, _), backend) in enumerate(batch):
        path = folder / f"attack{i}.yaml"
        path.write_text(text)
        # Table output: rendering huge gradients as JSON is the renderer's cost, not the run's.
        jobs.append(["run", "--no-numeric", "--quiet", "--backend", backend,
                     "--max-memory", "1GiB", str(path)])
    for ((text, refusal), backend), job, result in zip(batch, jobs, run_limited(jobs)):
        context = (backend, text[:600], result["stderr"][-2000:])
        assert problems(result) == [], context
        if result["exit_code"] == 2:
            assert result["stderr"].startswith("error:"), context
        if refusal is not None:
            message = " ".join(result["stderr"].split())
            assert result["exit_code"] == 2 and refusal in message, context
            assert message.startswith(f"error: {job[-1]}:"), context  # file:line:col
