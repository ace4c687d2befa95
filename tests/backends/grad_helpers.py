"""What the grad() tests share: a run of a spec text, torch tensors, and torch's own grad()."""
from __future__ import annotations

import numpy as np
import torch
from backend_helpers import load

from gradcli import runner

TOL = dict(rtol=1e-9, atol=1e-12)


def run(text: str, backend: str, numeric: bool = True):
    return runner.run(load(text), backend=backend, numeric=numeric)


def t64(values, grad: bool = True):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=grad)


def close(actual, expected, **tol) -> None:
    np.testing.assert_allclose(np.asarray(actual, np.float64),
                               np.asarray(expected, np.float64), **(tol or TOL))


def grad(y, x):
    """d(sum y)/dx, differentiable again; zeros where x does not reach y."""
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True, allow_unused=True)
    return torch.zeros_like(x) if g is None else g
