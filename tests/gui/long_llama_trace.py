"""A tiny random Llama (6 layers × 2 heads, 1 key/value head) on T random tokens, captured on the on-demand path
(q, k and each row's log-sum-exp kept; no T × T array), and the All heads view of it: what the All heads tests of
a long input page through."""

from __future__ import annotations

import pytest


def long_llama_trace(T: int = 600):
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("transformers")
    from attnviz.capture.on_demand import ON_DEMAND_T
    from attnviz.hf.capture import capture_hf

    assert T > ON_DEMAND_T
    cfg = tf.LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=6,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1024)
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # wider weights: heads that attend unevenly
        for p in model.parameters():
            p.mul_(3.0 if p.dim() >= 2 else 1.0)
    ids = torch.randint(0, 50, (1, T))
    trace = capture_hf(model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)},
                       [f"t{i}" for i in range(T)], attention="on_demand")
    assert "L0.probs" not in trace.arrays  # recomputed from q and k, never held whole
    return trace


def long_grid_view(qtbot, monkeypatch, trace, height: int = 330):
    """A ModelView that treats ``trace`` as too long to pool every head at once (the 30 × 9, 4,096-token case,
    scaled down), sized so a page holds some of its 6 layers, with no head of ``trace`` computed yet (the heads
    computed are kept per trace, and the tests share one)."""
    from attnviz.gui.views import all_heads_long, model_summary
    from attnviz.gui.views.model_view import ModelView
    from attnviz.selection import Selection

    monkeypatch.setattr(model_summary, "GRID_ON_DEMAND_WEIGHTS", 1)
    all_heads_long._COMPUTED.clear()
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(700, height)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(trace)
    return view
