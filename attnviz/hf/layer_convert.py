"""Recorded attention calls → a trace's per-layer arrays, layer by layer (split from :mod:`attnviz.hf.capture`).

A short capture converts every call after the forward. A long one on the fastest kernel converts each call as
soon as its block has run (:meth:`LayerConverter.finish_block`, the block recorder's ``on_end``): its arrays
go through a :class:`~attnviz.capture.spill.SpillStore` (kept in memory up to a budget, written to disk and
memory-mapped beyond it) and the call lets go of its tensors, so the forward never holds every layer's
q, k, v, z, x and residual stream at once (~9 GB at 16,384 tokens on a 30-layer, d 576 model).
"""

from __future__ import annotations

import bisect
import itertools

import numpy as np

from attnviz.capture.record import LARGE_T
from attnviz.capture.spill import SpillStore
from attnviz.hf.allocator import TRIM, resident_bytes
from attnviz.hf.check_memo import CheckMemo
from attnviz.hf.layer_arrays import call_arrays, on_demand_arrays
from attnviz.hf.projections import read_projections

__all__ = ["LayerConverter"]

# what a finished call lets go of (the tensors behind its arrays; shape-only probs and the mask stay)
_RELEASED = ("x", "x_kv", "query", "key", "value", "z", "lse")
# array names (after "L{i}.") of a layer's weights, and of arrays every layer is handed the same of
_WEIGHT_LEAVES = ("W_", "b_")
_SHARED_LEAVES = ("rope_cos", "rope_sin")


def _storage(t) -> tuple[int, int] | None:
    """[start, end) addresses of a tensor's storage (conversions are keyed by address)."""
    try:
        s = t.untyped_storage()
        return s.data_ptr(), s.data_ptr() + s.nbytes()
    except (AttributeError, RuntimeError):
        return None


_TRIM = TRIM  # glibc's malloc_trim (None elsewhere): attnviz.hf.allocator
# resident growth since the last trim worth handing back: a trim after every layer made the next layer fault its
# pages in again (1.33x the forward's CPU at 4,096 tokens against 1.17x without trims, which grew the peak by 1 GiB)
TRIM_STEP = 256 << 20


class LayerConverter:
    """The conversion state of one capture (one :class:`~attnviz.hf.tensor_numpy.TensorsToNumpy`, the distinct
    masks, the on-demand rules), shared by the layer-by-layer and the after-the-forward paths.

    Parameters
    ----------
    conv : the capture's TensorsToNumpy.
    qk_dtype : dtype q and k are kept in.
    post_ln : the family normalises after the residual sum.
    spill : where a long capture's large arrays go (None: everything stays in memory, converted after the
        forward).
    untrimmed : bytes of arrays kept in memory up to which the capture does not hand freed memory back (see
        TRIM_STEP): what a trace expected to fit its memory budget whole keeps (0: trim from the start, as a
        capture that will spill does). Beyond it (the estimate was short) or once an array is written, it trims.
    """

    def __init__(self, conv, qk_dtype, post_ln: bool, spill: SpillStore | None = None, untrimmed: int = 0):
        self.conv, self.qk_dtype, self.post_ln, self.spill = conv, qk_dtype, post_ln, spill
        self.untrimmed = untrimmed
        self.kept_bytes = 0  # of the arrays stored so far, besides views of the weights
        self.arrays: dict[str, np.ndarray] = {}
        self.facts: dict[int, object] = {}
        self.readings: list = []  # alive until every tensor is converted (conv keys by address)
        self.masks, self.outside, self.by_tensor, self.on_demand = [], {}, {}, {}
        self.blocks = None
        self._trimmed_at = None  # resident bytes right after the last malloc_trim (see TRIM_STEP)
        self.calls: list = []  # the recorder's live list
        self.T = None
        self.memo = CheckMemo()  # each structural check once per kind of layer (attnviz.hf.check_memo)

    def convert(self, i: int, call) -> None:
        """Arrays ``L{i}.*`` of one call and its layer facts (None for a layer kept as probabilities only)."""
        if i in self.facts:
            return
        T_run = call.probs.shape[-1]
        if not call.kept:
            if call.lse is not None:  # a layer not asked for in full: what recomputes its probabilities
                layer = on_demand_arrays(f"L{i}.", call, call.query[0], call.scaling, self.conv, self.qk_dtype,
                                         self.by_tensor, self.on_demand)
            else:
                layer = {f"L{i}.probs": self.conv(call.probs[0])}
            self.facts[i] = None
            self._store(layer)
            return
        blocks = self.blocks
        k = self.outside.setdefault(id(call.module), 0)
        self.outside[id(call.module)] += 1
        seen = blocks.outputs.get(id(call.module), []) if blocks is not None else []
        reading = read_projections(call, seen[k] if k < len(seen) else None,
                                   blocks.out_modules.get(id(call.module)) if blocks is not None else None, self.memo)
        block = blocks.block_of_call(call.index) if blocks is not None else None
        layer, fact = call_arrays(i, call, reading, block, self.conv,
                                  keep_out=T_run <= LARGE_T, post_ln=self.post_ln, masks=self.masks,
                                  masks_by_tensor=self.by_tensor, qk_dtype=self.qk_dtype, on_demand=self.on_demand,
                                  kept=self.arrays, memo=self.memo)
        self.facts[i] = fact
        if self.spill is None:
            self.readings.append(reading)
            self.arrays.update(layer)
        else:
            self._store(layer)

    def _store(self, layer: dict) -> None:
        if self.spill is None:
            self.arrays.update(layer)
            return
        # weights are read-only views of the model's own parameters (in memory anyway): never written to disk;
        # the rotary tables are one pair of arrays handed to every layer: written once
        own = {k: a for k, a in layer.items() if k.rpartition(".")[2].startswith(_WEIGHT_LEAVES)}
        shared = [k for k in layer if k.rpartition(".")[2] in _SHARED_LEAVES]
        rest = {k: a for k, a in layer.items() if k not in own}
        self.kept_bytes += sum(getattr(a, "nbytes", 0) for k, a in rest.items() if k not in shared)
        self.arrays.update(own)
        self.spill.keep(rest, shared=shared, into=self.arrays)  # written on the store's writer thread

    # -- layer by layer (long captures) ------------------------------------------------------------
    def finish_block(self, rec: dict) -> None:
        """The block recorder's ``on_end``: convert the calls made inside the block that just ran, then let go
        of their tensors and of the block's recorded stream (the first block's stays: ``emb.sum``)."""
        if self.spill is None:
            return
        first = rec["first_call"]
        done = [c for c in self.calls[first:] if c.index not in self.facts]
        if any(c.probs is None or c.probs.shape[0] != 1 for c in done):
            self.spill = None  # a batch of windows (Swin): converted after the forward, as short captures are
            return
        for call in done:
            self.convert(call.index, call)
        released = []
        for call in done:
            for name in _RELEASED:
                released.append(getattr(call, name))
                setattr(call, name, None)
            released.extend(t for pair in call.proj.values() for t in pair)
            call.proj = {}
        for key in ("resid", "h") + (("stream",) if first > 0 else ()):
            released.append(rec.get(key))
            rec[key] = None
        if self.blocks is not None:  # an output projection outside the module (BERT): its record too
            for call in done:
                seen = self.blocks.outputs.get(id(call.module), [])
                n = self.outside.get(id(call.module), 0)
                if 0 < n <= len(seen) and seen[n - 1] is not None:
                    released.extend(seen[n - 1])
                    seen[n - 1] = None
        self._forget(released)
        del released
        # a trace kept whole is not trimmed: each trim handed back the holes the next layer faulted in again
        # (at 4,096 tokens 6-33 thousand faults, 0.2-0.9 s of system time, with nothing to bound)
        if _TRIM is not None and self.spill is not None and (self.kept_bytes > self.untrimmed or self.spill.files):
            # a layer's tensors (tens of MB each at 8,192 tokens) freed between the small ones kept stay
            # resident as free holes of the allocator's arenas unless given back: the peak grew layer by layer.
            # Also before the first array is spilled: at 8,192 tokens the app's budget kept the first ~15 layers
            # in memory and, untrimmed, the process grew by 1.9 GB to a 3.19 GB peak (1.0 GB given back at once
            # by the first trim)
            # not at the first layer: the first layer's size is the baseline. A trim there handed back what the
            # previous capture had freed, and a 512-token capture faulted it in again (37k minor faults against
            # 3.9k, 1.19x the SDPA forward's wall time against 1.02x); one that never grows a step is never trimmed
            rss = resident_bytes()
            if rss is not None and self._trimmed_at is None:
                self._trimmed_at = rss
            elif rss is None or rss - self._trimmed_at >= TRIM_STEP:
                _TRIM(0)
                self._trimmed_at = resident_bytes()

    def _forget(self, tensors) -> None:
        """Drop conversions of tensors let go of: their addresses may be reused by later tensors."""
        spans = sorted({s for s in (_storage(t) for t in tensors if t is not None and hasattr(t, "untyped_storage"))
                        if s is not None})
        if not spans:
            return
        starts = [a for a, _ in spans]
        ends = list(itertools.accumulate((b for _, b in spans), max))  # ends[j]: the furthest end of spans[:j+1]
        # each key's address against the sorted spans (a scan of every span per key grew as layers' weights
        # joined the keys: ~70,000 comparisons a 30-layer capture)
        for key in [k for k in self.conv.seen if isinstance(k[0], int)]:
            j = bisect.bisect_right(starts, key[0]) - 1
            if j >= 0 and key[0] < ends[j]:
                del self.conv.seen[key]

