"""One optimizer update for all of the numpy core's variables at once, on flat buffers.

A small model's step is dominated by the number of numpy calls, not by the arithmetic: an
RMSProp update is eleven elementwise ops per variable. Laid end to end in one flat array, the
variables, their gradients and their slots take each op once for all of them. Every element
goes through the same ops in the same order as the per-variable update (the rule's own
update_numpy), so the values are the same bits.

The flat slot arrays are the storage; each variable's slots dict holds views into them, so
the slots read per variable as before. Which FlatUpdate the dicts' views belong to is the
trainee's to know (numpy_train): it lays the buffers out again when that changed (a fresh
start replaces the dicts, another set of variables or a per-variable step wrote into them).
"""
from __future__ import annotations

import operator

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
        self.grad_views = self._views(self.grad)     # ... as the gradients' shapes, to copy into
        self.slots: dict = {}                        # the rule's slots (and scratch), flat
        self.slot_dicts: list = []                   # the per-variable dicts holding their views
        self.linked_count = -1                       # len(self.slots) when they were linked
        self.new = None                              # the last step's new values, flat
        self.views: list = []                        # ... as the variables' arrays it gave out
        # the flat array (and its views) the step before last made: the next step's new
        # values are written there, the variables hold the last step's (double buffering)
        self.spare = None
        self.spare_views: list = []
        # a trainee's constraints clip(W, lo, hi) as (lo, hi) over the flat values, per key
        # (the trainee's graph whose constant bounds they are), or None when they do not fit
        self.clip_bounds: dict = {}

    @staticmethod
    def fits(values: list, grads: list) -> bool:
        """Whether the flat update gives the per-variable update's bits (else: per variable)."""
        if not values:
            return False
        dtype = values[0].dtype
        return all(type(v) is np.ndarray and type(g) is np.ndarray and v.ndim > 0
                   and v.dtype == dtype and g.dtype == dtype and g.shape == v.shape
                   for v, g in zip(values, grads))

    def adopt(self, slots: list) -> bool:
        """Lay the variables' current slots end to end (the first step: none yet) and give
        their dicts views of the flat ones; False when the variables have different slots."""
        keys = set(slots[0])
        if any(set(per_var) != keys for per_var in slots):
            return False
        self.slots = {k: np.concatenate([np.reshape(s[k], -1) for s in slots]) for k in keys}
        self._link(slots)
        return True

    def step(self, rule, values: list, grads: list) -> list:
        """The rule's update on the flat buffers; the variables' new values (views of another
        array than theirs, so the values from before the step stay intact; the values from
        the step before last are overwritten: nobody holds them, the loop's snapshot is the
        step's own)."""
        if len(values) == len(self.views) and all(map(operator.is_, values, self.views)):
            value = self.new  # the variables are still its views (clipped in place or not)
            if self.spare is None:
                self.spare = np.empty_like(value)
                self.spare_views = self._views(self.spare)
            out = self.spare
        else:
            value = np.concatenate(values, axis=None, out=self.value)  # axis None: flattened
            # values from elsewhere (a restart, a snapshot put back): the step before last's
            # array may be theirs, so it is not written; a new one is made
            out = self.spare = None
        # one copy per gradient into its view: what concatenate(axis=None, out=) writes (same
        # dtype and shape: fits()), without its argument dispatch and flattening
        for view, grad in zip(self.grad_views, grads):
            view[...] = grad
        new = rule.update_numpy(value, self.grad, self.slots, self.dtype, out=out)
        if len(self.slots) != self.linked_count:
            self._link(self.slot_dicts)  # the rule made its slots on this first step
        if new is out:  # the last step's values become the spare
            views = self.spare_views
            self.spare, self.spare_views = self.new, self.views
            self.new, self.views = new, views
        else:
            self.new, self.views = new, self._views(new)
        return self.views

    def _views(self, flat) -> list:
        """The variables' arrays as views of one flat array."""
        return [flat[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)]

    def _link(self, slots: list) -> None:
        self.slot_dicts = slots
        self.linked_count = len(self.slots)
        for key, flat in self.slots.items():
            if key.startswith("_"):
                continue  # scratch: not a slot
            for per_var, (a, b), shape in zip(slots, self.bounds, self.shapes):
                per_var[key] = flat[a:b].reshape(shape)
