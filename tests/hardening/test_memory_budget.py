"""Intermediate tensors stay under the memory budget on every backend, checked before allocation.

Each attack runs in a child process capped at 3 GiB of address space (limited.py):
without the budget, the 3 GiB outer product fails there with a MemoryError
instead of a refusal that names the op, its place and its shape.
"""
from __future__ import annotations

import numpy as np
import pytest
from limited import GiB, problems, run_limited

from gradcli.core.budget import MemoryBudget, parse_size, result_shape

BACKENDS = ["numpy", "torch", "jax", "tensorflow"]

OUTER = """\
inputs:
  a: {zeros: [20000, 1]}
  b: {zeros: [1, 20000]}
let:
  c: a * b
outputs:
  y: sum(c)
"""


def flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines


def write(tmp_path, text: str, name: str = "attack.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_outer_product_past_the_budget_is_refused_before_it_allocates(tmp_path, backend):
    spec = write(tmp_path, OUTER)
    [result] = run_limited([["run", "--backend", backend, spec]])
    message = flat(result["stderr"])
    assert result["exit_code"] == 2 and problems(result) == [], result
    assert f"{spec}:5:8:" in message                       # the let's expression, at 'a * b'
    assert ("op 'mul' would make a tensor of shape [20000, 20000] float64 (2.98 GiB); the "
            "memory budget allows 1 GiB per tensor") in message
    assert "--max-memory" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_way_to_ask_for_a_huge_tensor_is_refused(tmp_path, backend):
    attacks = {
        "uniform": ("inputs:\n  x: [1.0]\noutputs:\n  y: sum(x) + sum(uniform([100000, 100000]))\n",
                    "op 'uniform' would make a tensor of shape [100000, 100000]"),
        "one_hot": ("inputs:\n  i: {value: [0, 1, 2], dtype: int64}\n"
                    "outputs:\n  y: sum(one_hot(i, 1000000000))\n",
                    "op 'one_hot' would make a tensor of shape [3, 1000000000]"),
        "index": ("inputs:\n  x: {zeros: [1, 5000000]}\noutputs:\n  y: sum(x[[" +
                  ", ".join(["0"] * 200) + "]])\n",
                  "op 'getitem' would make a tensor of shape [200, 5000000]"),
        "matmul": ("inputs:\n  a: {zeros: [30000, 1]}\n  b: {zeros: [1, 30000]}\n"
                   "outputs:\n  y: sum(a @ b)\n",
                   "op 'matmul' would make a tensor of shape [30000, 30000]"),
    }
    jobs = [["run", "--no-numeric", "--backend", backend, write(tmp_path, text, f"{name}.yaml")]
            for name, (text, _) in attacks.items()]
    for (name, (_, expected)), job, result in zip(attacks.items(), jobs, run_limited(jobs)):
        assert result["exit_code"] == 2 and problems(result) == [], (name, result)
        assert expected in flat(result["stderr"]), (name, result["stderr"])
        assert flat(result["stderr"]).startswith(f"error: {job[-1]}:"), result["stderr"]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_graph_total_is_limited_too(tmp_path, backend):
    # Eight 16 MB tensors, each well under a 32 MiB per-tensor limit, pass 64 MiB together.
    lets = "".join(f"  c{i}: a * b + {i}\n" for i in range(8))
    spec = write(tmp_path, "inputs:\n  a: {ones: [2000, 1]}\n  b: {ones: [1, 1000]}\nlet:\n"
                 + lets + "outputs:\n  y: sum(c7)\n")
    [result] = run_limited([["run", "--no-numeric", "--max-memory", "64MiB", "--backend",
                             backend, spec]])
    message = flat(result["stderr"])
    assert result["exit_code"] == 2 and problems(result) == [], result
    assert "while the graph already holds" in message
    assert "the memory budget allows 64 MiB in all" in message


def test_max_memory_raises_the_budget(tmp_path):
    spec = write(tmp_path, OUTER.replace("20000", "3000"))  # 72 MB
    low, high = run_limited([["run", "--no-numeric", "--max-memory", "100MiB", spec],
                             ["run", "--no-numeric", "--max-memory", "1GiB", spec]])
    assert low["exit_code"] == 2 and "allows 50 MiB per tensor" in flat(low["stderr"])
    assert high["exit_code"] == 0 and problems(high) == [], high


def test_a_memory_error_the_budget_did_not_foresee_is_a_clear_error(tmp_path):
    # A budget above what the process may use: numpy's own allocation fails, cleanly.
    spec = write(tmp_path, OUTER)
    [result] = run_limited([["run", "--max-memory", "64GiB", spec]], limit_bytes=2 * GiB)
    text = result["stdout"] + result["stderr"]
    assert result["exit_code"] == 2, result
    assert "Traceback" not in text and "internal error" not in text
    assert f"{spec}:5:8: mul() ran out of memory" in flat(result["stderr"])


def test_a_bad_size_is_a_usage_error(tmp_path):
    [result] = run_limited([["run", "--max-memory", "lots", write(tmp_path, OUTER)]])
    assert result["exit_code"] == 2 and "expected a size such as 16GiB" in result["stderr"]


@pytest.mark.parametrize("text, expected", [("16GiB", 16 * GiB), ("512 MiB", 512 << 20),
                                            ("2G", 2 * GiB), ("1e9", 10 ** 9), ("1.5GB", 1.5e9)])
def test_sizes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("op, shapes, attrs, make", [
    ("mul", [(3, 1), (1, 4)], {}, lambda a, b: a * b),
    ("add", [(2, 1, 5), (4, 1)], {}, lambda a, b: a + b),
    ("matmul", [(2, 3, 4), (4, 5)], {}, np.matmul),
    ("matmul", [(4,), (3, 4, 5)], {}, np.matmul),
    ("matmul", [(3, 4), (4,)], {}, np.matmul),
    ("concat", [(2, 3), (4, 3)], {"axis": 0}, lambda *v: np.concatenate(v, axis=0)),
    ("stack", [(2, 3), (2, 3), (2, 3)], {"axis": -1}, lambda *v: np.stack(v, axis=-1)),
    ("getitem", [(4, 5, 6)], {"index": (np.array([0, 0, 3, 1]), slice(1, 4), None)},
     lambda v: v[np.array([0, 0, 3, 1]), 1:4, None]),
    ("one_hot", [(2, 3)], {"depth": 7}, lambda v: np.eye(7)[v.astype(int)]),
])
def test_predicted_shapes_match_what_numpy_computes(op, shapes, attrs, make):
    arrays = [np.zeros(s) for s in shapes]
    assert result_shape(op, shapes, attrs) == make(*arrays).shape


def test_the_prediction_is_checked_before_the_kernel_runs():
    budget = MemoryBudget(total=1000)
    budget.admit("mul", [(10, 1), (1, 6)], ["float64", "float64"], {})  # 480 bytes: fine
    with pytest.raises(Exception, match=r"shape \[10, 7\] float64 \(560 bytes\)"):
        budget.admit("mul", [(10, 1), (1, 7)], ["float64", "float64"], {})
