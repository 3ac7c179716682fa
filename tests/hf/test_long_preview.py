"""A long input's live preview: the selected layer's q, k and lse (O(T·d), never T×T) are reported during the
forward, and the head map's on-demand overview pooled from them equals the max-pool of the finished trace's
probabilities of that layer and head (another layer's does not)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture.on_demand import ON_DEMAND_T

T = ON_DEMAND_T + 344  # ≈600: on the fastest kernel


@pytest.fixture(scope="module")
def llama():
    tf = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                                               max_position_embeddings=1024)).eval()
    with torch.no_grad():  # wider than the init so the layers' maps differ visibly
        g = torch.Generator().manual_seed(3)
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (0.3 if p.dim() >= 2 else 0.1))
    return model


@pytest.fixture
def long_previews(monkeypatch):
    """As at 8,192 tokens of a 9-head model: this input's (H, T, T) is above the cells a preview computes whole."""
    import attnviz.hf.capture as cap

    monkeypatch.setattr(cap, "PREVIEW_CELLS", 4 * T * T // 8)


def _capture(model, layers):
    from attnviz.hf.capture import capture_hf

    ids = torch.randint(0, 64, (1, T), generator=torch.Generator().manual_seed(1))
    events = []
    trace = capture_hf(model, {"input_ids": ids}, [f"t{i}" for i in range(T)], preview_layers=layers,
                       preview=lambda p: events.append(("preview", p)))
    events.append(("trace", trace))
    return events


def _overview(source, layer, head, monkeypatch):
    """The head map's overview of one layer and head (its own code: OnDemandMap), pooled 8×8."""
    import attnviz.gui.views.on_demand_map as odm

    monkeypatch.setattr(odm, "OVERVIEW_SIDE", T // 8 + 1)  # level 3: each cell the max of an 8×8 block
    od = odm.OnDemandMap(source, layer, "self", head)
    assert od.overview_level == 3
    for _ in od.fill_overview():
        pass
    return od.overview


def test_long_preview_carries_q_k_lse_and_pools_to_the_traces_map(llama, long_previews, monkeypatch):
    from attnviz.capture.preview import PreviewMaps
    from attnviz.gui.views.heatmap_data import block_max

    events = _capture(llama, [0, 1])
    assert [kind for kind, _ in events] == ["preview", "preview", "trace"]  # both before the trace is finished
    (_, p0), (_, p1), (_, trace) = events
    assert (p0.layer, p1.layer, p1.n_layers) == (0, 1, 3)
    assert "L1.probs" in trace.deferred  # the capture itself kept no T×T
    assert p1.probs is None and p1.deferred is not None and p1.shape == trace.probs_shape(1) == (4, T, T)
    q, k, lse = p1.deferred.q, p1.deferred.k, p1.deferred.lse
    assert q.shape == (4, T, 8) and k.shape == (2, T, 8) and lse.shape == (4, T)  # O(T·d), never T×T
    assert q.flags.owndata and k.flags.owndata and lse.flags.owndata  # copies: the forward cannot change them
    for head in (0, 3):
        want = block_max(trace.probs(1, heads=head)[0], 8, 8)
        got = _overview(PreviewMaps(p1), 1, head, monkeypatch)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
        assert got.max() > 0.5 and (got == 0).any()  # a real map: strong weights and masked (causal) blocks
    # negative control: layer 0's preview is another map (by 10,000× the tolerance above): a preview of the
    # wrong layer would fail there
    other = _overview(PreviewMaps(p0), 0, 3, monkeypatch)
    assert np.abs(other - block_max(trace.probs(1, heads=3)[0], 8, 8)).max() > 1e-3
    with pytest.raises(KeyError):  # a preview is asked for its own layer only
        PreviewMaps(p1).probs(0, heads=0)


def test_a_short_enough_layer_still_sends_its_probabilities(llama):
    (_, p), (_, trace) = _capture(llama, [2])  # 4·600·600 cells: below PREVIEW_CELLS
    assert p.deferred is None and p.probs.shape == (4, T, T)
    np.testing.assert_allclose(p.probs, trace.probs(2), rtol=0, atol=1e-6)
