"""mask_rows: the [MASK] rows of a trace, recomputed from the recorded arrays by hand."""

from __future__ import annotations

import numpy as np

from attnviz.analysis.masked_positions import mask_rows
from attnviz.bench.traces import sample_trace


def _trace():
    trace = sample_trace("encoder", T=8, head="mlm", n_heads=4)
    trace.tokens[2] = trace.tokens[5] = "[MASK]"
    trace.meta["labels"] = [f"w{i}" for i in range(trace["prediction"].shape[-1])]
    return trace


def test_rows_are_the_recorded_attention_and_prediction():
    trace = _trace()
    rows = mask_rows(trace, top_k=3)
    assert [m.position for m in rows] == [2, 5]
    for m in rows:
        q = m.position
        p = np.asarray(trace["prediction"])[q]
        best = np.argsort(-p)[:3]
        assert [w for w, _ in m.guesses] == [f"w{i}" for i in best]
        assert np.allclose([x for _, x in m.guesses], p[best])
        # by hand: every layer's and head's row q, the head with the largest weight on another token
        full = np.stack([np.asarray(trace[f"L{layer}.probs"])[:, q, :] for layer in range(trace.n_layers)])
        assert np.allclose(m.attention, full, atol=1e-6)
        off = full.copy()
        off[:, :, q] = -1
        layer, head = np.unravel_index(np.argmax(off.max(-1)), off.shape[:2])
        assert m.head == (layer, head)
        assert m.looks_at[0][1] == max(full[layer, head])


def test_the_mask_reading_itself_does_not_choose_the_head():
    # control: make one head's row put nearly everything on the [MASK] itself; it must not be the one shown
    trace = _trace()
    probs = np.asarray(trace["L1.probs"]).copy()
    probs[3, 2, :] = 0.001
    probs[3, 2, 2] = 1 - 0.001 * (probs.shape[-1] - 1)
    trace.arrays["L1.probs"] = probs
    rows = mask_rows(trace)
    # a plain argmax over whole rows would pick that head: the exclusion is what the test sees
    whole = rows[0].attention.max(-1)  # (L, H)
    assert np.unravel_index(np.argmax(whole), whole.shape) == (1, 3)
    assert rows[0].head != (1, 3)


def test_no_mask_no_rows():
    assert mask_rows(sample_trace("encoder", T=8, head="mlm")) == []
