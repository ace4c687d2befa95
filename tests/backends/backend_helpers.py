"""Checks the backend tests share: a run on a framework against the numpy core's run."""
from __future__ import annotations

import functools

import numpy as np

from gradcli import runner
from gradcli.spec import load_spec, load_spec_text

FLOAT64 = dict(rtol=1e-9, atol=1e-12)
FLOAT32 = dict(rtol=2e-5, atol=1e-6)
# Central differences divide forward rounding by 2 * eps: float64 ~1e-10, float32 ~1e-4 apart.
NUMERIC = {"float64": dict(rtol=1e-7, atol=1e-8), "float32": dict(rtol=2e-3, atol=2e-3)}


def close(actual, expected, label: str, rtol: float, atol: float) -> list[str]:
    """[] when both are None or agree elementwise (NaN where both are NaN); else one failure."""
    if actual is None or expected is None:
        return [] if actual is None and expected is None else [f"{label}: {actual!r} vs {expected!r}"]
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        return [f"{label}: shape {a.shape} vs {e.shape}"]
    if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
        return [f"{label}: {a.ravel()[:6]} vs numpy {e.ravel()[:6]} "
                f"(max |diff| {np.nanmax(np.abs(a - e)):.3g})"]
    return []


def differences(result, reference, *, numeric: bool = True) -> list[str]:
    """Every value, gradient (overridden, true, numeric) and training number that disagrees."""
    dtype = reference.experiment.dtype
    tol = FLOAT64 if dtype == "float64" else FLOAT32
    out = []
    for name, value in reference.values.items():
        out += close(result.values.get(name), value, f"values.{name}", **tol)
    for o, row in reference.gradients.items():
        for n, ref in row.items():
            got = result.gradients[o][n]
            out += close(got.overridden, ref.overridden, f"overridden d{o}/d{n}", **tol)
            out += close(got.true, ref.true, f"true d{o}/d{n}", **tol)
            if numeric:
                out += close(got.numeric, ref.numeric, f"numeric d{o}/d{n}", **NUMERIC[dtype])
    if reference.train is not None:
        for n, value in reference.train.final.items():
            out += close(result.train.final[n], value, f"train.params.{n}", **tol)
        out += close(result.train.loss, reference.train.loss, "train.loss", **tol)
        out += close(result.train.final_loss, reference.train.final_loss, "train.final_loss", **tol)
        for step, (got, ref) in enumerate(zip(result.train.gradients, reference.train.gradients)):
            for n in ref:
                out += close(got.get(n), ref[n], f"train.gradients[{step}].{n}", **tol)
    return out


@functools.lru_cache(maxsize=None)
def numpy_run(path: str, dtype: str):
    """The numpy core's result for a bundled experiment (computed once per dtype)."""
    return runner.run(load_spec(path, overrides=[f"dtype={dtype}"]), backend="numpy")


def load(text: str, name: str = "spec", dtype: str = "float64"):
    return load_spec_text(text, path=f"{name}.yaml", overrides=[f"dtype={dtype}"])
