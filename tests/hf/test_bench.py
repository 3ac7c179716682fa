"""The benchmark runs end to end (tiny sizes here; the BERT-base figures come from ``measure_hf_overhead()``)."""

from __future__ import annotations

import pytest


def test_overhead_benchmark_reports_every_timing():
    pytest.importorskip("transformers")
    from attnviz.bench.hf import measure_hf_overhead

    tiny = dict(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                max_position_embeddings=64)
    out = measure_hf_overhead(T=32, repeat=2, sizes=tiny)
    assert out["model"] == "BERT 2L 4H d32 MLM, T=32"
    capture = "attnviz capture ms (MLM prediction deferred, as in the app)"
    full = "attnviz capture + whole MLM prediction ms"
    for key in ("SDPA forward ms (fastest wall)", "eager + output_attentions ms", capture, full):
        assert out[key] > 0
    ratio = out[capture] / out["SDPA forward ms (fastest wall)"]
    assert out["attnviz capture / SDPA (wall)"] == pytest.approx(ratio)
    ratio = out[full] / out["SDPA forward ms (fastest wall)"]
    assert out["attnviz capture + whole prediction / SDPA (wall)"] == pytest.approx(ratio)


def test_decoder_benchmark_reports_time_memory_and_the_big_models_peak():
    pytest.importorskip("transformers")
    from attnviz.bench.hf_decoder import measure_decoder_capture

    small = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2)
    out = measure_decoder_capture(T=16, repeat=1, sizes=small, big={**small, "num_hidden_layers": 4}, big_T=32)
    assert out["decoder"].startswith("Llama-shaped 2L d32 4/2 heads, T=16")
    wall = out["attnviz capture ms (every intermediate of every layer)"] / out["plain eager forward ms (fastest wall)"]
    assert out["capture / eager forward (wall)"] == pytest.approx(wall)
    assert out["memory: capture peak MiB"] > 0 and out["big: trace MiB"] > 0
    assert 0 < out["preview: layer 0 of 2 reported / whole capture (wall, median)"] < 1
    assert "layer 2 kept in full" in out["big decoder"] and out["big: peak / weights' size"] > 0


def test_encoder_decoder_benchmark_reports_the_capture_over_the_eager_forward():
    pytest.importorskip("transformers")
    from attnviz.bench.hf_encdec import measure_encdec_capture

    small = dict(vocab_size=120, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4)
    out = measure_encdec_capture(T_src=12, T_dec=6, repeat=1, sizes=small)
    assert out["encoder–decoder"].startswith("T5-small-shaped 2+2L d32 4 heads, source T=12, decoder T=6")
    capture = out["encdec: attnviz capture ms (encoder self, decoder self, cross; every layer)"]
    plain = out["encdec: plain eager forward ms (fastest wall)"]
    assert plain > 0 and out["encdec: capture / eager forward (wall)"] == pytest.approx(capture / plain)
