"""One optimizer update for all of the numpy core's variables at once, on flat buffers.

A small model's step is dominated by the number of numpy calls, not by the arithmetic: an
RMSProp update is eleven elementwise ops per variable. Laid end to end in one flat array, the
variables, their gradients and their slots take each op once for all of them. Every element
goes through the same ops in the same order as the per-variable update (the rule's own
update_numpy), so the values are the same bits.

The flat slot arrays are the storage; each variable's slots dict holds views into them, so
the slots read per variable as before. Whoever replaces a slots dict (a fresh start) breaks
the link, and the next step lays the buffers out again from what the dicts then hold.
"""
from __future__ import annotations

import numpy as np


class FlatUpdate:
    """The flat buffers of one set of variables (same dtype, gradients of their own shape)."""

    def __init__(self, names: list, values: list) -> None:
        self.names = names
        self.shapes = [v.shape for v in values]
        self.dtype = values[0].dtype
        ends = np.cumsum([v.size for v in values]).tolist()
        self.bounds = list(zip([0, *ends[:-1]], ends))
        self.value = np.empty(ends[-1], self.dtype)  # the variables before the step
        self.grad = np.empty(ends[-1], self.dtype)
        self.slots: dict = {}                        # the rule's slots (and scratch), flat
        self.views: dict | None = None               # slot key -> [per-variable view]
        self.keys: set = set()                       # the views' keys
        self.linked_count = -1                       # len(self.slots) when they were linked
        self.slot_dicts: list | None = None          # the per-variable slots dicts, this step

    @staticmethod
    def fits(values: list, grads: list) -> bool:
        """Whether the flat update gives the per-variable update's bits (else: per variable)."""
        if not values:
            return False
        dtype = values[0].dtype
        return all(type(v) is np.ndarray and type(g) is np.ndarray and v.ndim > 0
                   and v.dtype == dtype and g.dtype == dtype and g.shape == v.shape
                   for v, g in zip(values, grads))

    def linked(self, slots: list) -> bool:
        """Whether the variables' slots dicts still hold this object's views."""
        if self.views is None:
            return False  # never laid out yet
        for key, views in self.views.items():
            for per_var, view in zip(slots, views):
                if per_var.get(key) is not view:
                    return False
        keys = self.keys
        return all(per_var.keys() == keys for per_var in slots)

    def adopt(self, slots: list) -> bool:
        """Lay the variables' current slots end to end (the first step: none yet)."""
        keys = set(slots[0])
        if any(set(per_var) != keys for per_var in slots):
            return False
        self.slots = {k: np.concatenate([np.reshape(s[k], -1) for s in slots]) for k in keys}
        self._link(slots)
        return True

    def step(self, rule, values: list, grads: list, slots: list) -> list:
        """The rule's update on the flat buffers; the variables' new values (views of one new
        array, so the values from before the step stay intact)."""
        np.concatenate(values, axis=None, out=self.value)  # axis None: each one flattened
        np.concatenate(grads, axis=None, out=self.grad)
        new = rule.update_numpy(self.value, self.grad, self.slots, self.dtype)
        if len(self.slots) != self.linked_count:
            self._link(slots)  # the rule made its slots on this first step
        self.new = new
        return [new[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)]

    def _link(self, slots: list) -> None:
        self.views = {}
        self.keys = {k for k in self.slots if not k.startswith("_")}
        self.linked_count = len(self.slots)
        for key, flat in self.slots.items():
            if key.startswith("_"):
                continue  # scratch: not a slot
            views = self.views[key] = [flat[a:b].reshape(shape)
                                       for (a, b), shape in zip(self.bounds, self.shapes)]
            for per_var, view in zip(slots, views):
                per_var[key] = view
