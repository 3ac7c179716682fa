"""What the on-demand family tests share (test_mpt_on_demand.py, test_on_demand_zoo.py): a tiny model of a family
with its own eager probabilities and its on-demand capture, made once per name, and the check that every layer's
blocks (whole map, picked heads / strided rows / reversed columns) equal those probabilities."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.hf.capture import capture_hf

from .tiny_models import build, tokens_of

TOL = 1e-6
MPT = ["mpt", "mpt_clip"]  # test_mpt_on_demand.py


class Pairs:
    """``pairs(name)`` → (model, inputs, output_attentions reference, on-demand trace), each built once."""

    def __init__(self):
        self._cache: dict[str, tuple] = {}

    def __call__(self, name: str) -> tuple:
        if name not in self._cache:
            model, inputs = build(name)
            with torch.no_grad():
                ref = model(**inputs, output_attentions=True)
            fast = capture_hf(model, inputs, tokens_of(inputs, model), attention="on_demand")
            self._cache[name] = (model, inputs, ref, fast)
        return self._cache[name]


def assert_blocks_equal(fast, ref, tol: float = TOL) -> None:
    """Every layer of ``fast`` is deferred (no (H, T, T) kept) and its blocks equal ``ref.attentions``."""
    for i, want in enumerate(ref.attentions):
        want = want[0].numpy()
        assert f"L{i}.probs" in fast.deferred and f"L{i}.probs" not in fast.arrays
        np.testing.assert_allclose(fast.probs(i), want, rtol=0, atol=tol)
        H, T, _ = want.shape
        np.testing.assert_allclose(fast.probs(i, heads=[H - 1, 0], rows=slice(1, T, 2), cols=[T - 1, 0]),
                                   want[[H - 1, 0]][:, 1::2][:, :, [T - 1, 0]], rtol=0, atol=tol)
        np.testing.assert_array_equal(np.isneginf(fast[f"L{i}.mask"]), want[0] == 0)


def assert_auto_goes_on_demand(model, T: int, monkeypatch, tol: float = TOL):
    """A 2-layer ``model``'s capture with attention="auto" above the full-map length keeps no (H, T, T) and its
    last 20 rows equal the model's own eager probabilities; returns the capture and those probabilities."""
    import attnviz.hf.capture as cap

    ids = torch.randint(3, 64, (1, T), generator=torch.Generator().manual_seed(3))
    monkeypatch.setattr(cap, "MAX_FULL_T", T - 1)  # above the full-map length: on demand, not refused
    trace = capture_hf(model, {"input_ids": ids}, [f"t{i}" for i in range(T)])  # attention="auto"
    assert "L1.probs" in trace.deferred and not [k for k in trace.arrays if k.endswith(".probs")]
    with torch.no_grad():
        want = model(input_ids=ids, output_attentions=True).attentions
    for i in range(2):
        np.testing.assert_allclose(trace.probs(i, rows=slice(T - 20, T)), want[i][0, :, T - 20:].numpy(),
                                   rtol=0, atol=tol)
    return trace, want
