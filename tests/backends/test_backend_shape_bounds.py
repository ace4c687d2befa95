"""Slice bounds and shapes past int64 on every backend: a slice step of 2**63-1 made XLA
abort the process (jax, SIGABRT); a zero-size reshape to dimensions of 2**63-1 was an
internal error in TensorFlow (its Tile overflowed) while numpy refused it. Slices are brought
within their dimension before a framework sees them, and every backend refuses a shape whose
size (zeros left out) passes numpy's largest, at the op's place."""
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.backends.eager_args import clamped
from gradcli.core import shapes
from gradcli.errors import GraphError

ROOT = Path(__file__).parent.parent.parent
BIG = 2**63 - 1


def run(tmp_path, backend, expression):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\ninputs:\n  x: [1.0, 2.0, 4.0]\noutputs:\n  y: {expression!r}\n")
    return subprocess.run([sys.executable, "-m", "gradcli", "run", str(spec), "--backend",
                           backend, "--format", "json", "--no-numeric"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def test_a_slice_step_past_int64_range_takes_the_first_element(tmp_path, backend):
    done = run(tmp_path, backend, f"sum(x[::{BIG}])")
    assert done.returncode == 0, (done.returncode, done.stderr)  # not -6 (SIGABRT)
    assert json.loads(done.stdout)["values"]["y"] == 1.0  # x[0]: the step passes the end


def test_a_shape_past_the_largest_size_is_refused_at_its_place(tmp_path, backend):
    done = run(tmp_path, backend, f"sum(reshape(x[0:0], [0, {BIG}, {BIG}]))")
    assert done.returncode == 2, done.stderr
    assert "s.yaml:5:11:" in done.stderr and "reshape() failed: shape [0, " in done.stderr
    assert "multiply to more than 9,223,372,036,854,775,807" in done.stderr
    assert "internal error" not in done.stderr


def test_as_shape_refuses_only_past_the_largest_size():
    assert shapes.as_shape([0, BIG, 1]) == (0, BIG, 1)  # numpy makes this one
    np.empty((0, BIG, 1), dtype=bool)
    with pytest.raises(GraphError, match="too big"):
        shapes.as_shape([0, BIG, 2])
    with pytest.raises(ValueError):  # numpy refuses it too: the same line
        np.empty((0, BIG, 2), dtype=bool)
    assert shapes.as_shape([-1, BIG]) == (-1, BIG)


BOUNDS = [None, 0, 1, 2, 3, -1, -3, -4, 5, BIG, -BIG - 1, 2**70, -2**70]
STEPS = [None, 1, 2, -1, -2, 4, -4, BIG, -BIG, 2**70, -2**70]


@pytest.mark.parametrize("shape", [(3,), (0,), (1,), (4, 2)])
def test_clamped_slices_select_what_numpy_selects(shape):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    dim = shape[-1]
    for start, stop, step in itertools.product(BOUNDS, BOUNDS, STEPS):
        for index in [(slice(start, stop, step),), (Ellipsis, slice(start, stop, step)),
                      (None, slice(start, stop, step), Ellipsis)]:
            got = clamped(index, shape)
            np.testing.assert_array_equal(a[got], a[index], err_msg=str((shape, index, got)))
            if index[0] is Ellipsis:
                assert all(v is None or -dim - 1 <= v <= max(dim, 1)
                           for v in (got[1].start, got[1].stop, got[1].step))
