"""``preview``: each layer's probabilities reported during the forward, once per layer in order, equal to the
final trace's and to transformers' own eager attentions, as copies."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .factories import TEXT, make_model, prepare


@pytest.fixture(scope="module")
def llama4(tmp_path_factory):
    pytest.importorskip("transformers")
    from attnviz.hf.loader import load_hf_model

    return load_hf_model(make_model("llama", tmp_path_factory.mktemp("hf") / "llama4", seed=5, layers=4), device="cpu")


def test_on_layer_fires_once_per_layer_in_order_with_the_traces_probabilities(llama4):
    from attnviz.hf.capture import eager_attention
    from attnviz.runtime import run_trace

    seen = []
    trace = run_trace(llama4, text=TEXT, preview=lambda v: seen.append((v.layer, v.probs, v.tokens, v.masked)))
    assert [i for i, *_ in seen] == [0, 1, 2, 3]
    assert all(list(tokens) == trace.tokens for _, _, tokens, _ in seen)
    for i, p, _, masked in seen:
        np.testing.assert_array_equal(masked, np.isneginf(trace[f"L{i}.mask"]))  # causal: the upper triangle
        assert masked.sum() == len(trace.tokens) * (len(trace.tokens) - 1) // 2
        assert p.dtype == np.float32 and p.flags.owndata  # a copy, not a view of a tensor the forward reuses
        np.testing.assert_array_equal(p, trace[f"L{i}.probs"])
    # independent: transformers' own eager attentions of the same input
    with torch.no_grad(), eager_attention(llama4.model):
        ref = llama4.model(**prepare(llama4).inputs, output_attentions=True).attentions
    for (i, p, _, _), r in zip(seen, ref):
        np.testing.assert_allclose(p, r[0].numpy(), atol=1e-6)
    # negative control: the layers differ, so reporting one array for all of them would fail above
    assert not np.allclose(seen[0][1], seen[1][1])


def test_layers_kept_in_part_still_report_every_layer(llama4):
    from attnviz.runtime import run_trace

    seen = []
    trace = run_trace(llama4, text=TEXT, layers=[1], preview=lambda v: seen.append((v.layer, v.probs)))
    assert [i for i, _ in seen] == [0, 1, 2, 3]
    for i, p in seen:  # the layers not kept are stored compactly; the report is the model's float32
        np.testing.assert_allclose(p, trace[f"L{i}.probs"].astype(np.float32), atol=1e-3)


def test_report_layers_reports_only_those(llama4):
    from attnviz.runtime import run_trace

    seen = []
    trace = run_trace(llama4, text=TEXT, preview_layers=[2], preview=lambda v: seen.append((v.layer, v.probs)))
    assert [i for i, _ in seen] == [2]
    np.testing.assert_array_equal(seen[0][1], trace["L2.probs"])
