"""The claims' batched held-out measurements equal the one-trace-per-input path they replaced, and the
sinusoidal figure's numbers are the model's buffer and the textbook formula."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.lessons.claims_order import held_out_permutation_error
from attnviz.lessons.recompute import max_err, recompute_attention, weights_from_module
from attnviz.lessons.workbench import Workbench, fresh_texts, held_out_records, trace_text


@pytest.fixture(scope="module")
def bench():
    return Workbench()


def test_workbench_loads_a_model_once_whatever_it_is_called(bench):
    from attnviz.models.checkpoint import resolve_model_path

    assert bench.model("coref") is bench.model(str(resolve_model_path("coref")))


def test_batched_records_equal_one_trace_per_input(bench):
    loaded = bench.model("coref")
    texts = fresh_texts(loaded, 12, seed=5)
    seen = []
    for idx, rec in held_out_records(loaded, texts):
        assert len({len(trace_text(loaded, texts[i]).tokens) for i in idx}) == 1  # one length per batch
        for b, i in enumerate(idx):
            tr = trace_text(loaded, texts[i])
            for layer in range(tr.n_layers):
                for key in ("x", "probs", "z", "out"):
                    np.testing.assert_allclose(rec[key][layer][b], tr[f"L{layer}.{key}"], atol=2e-5)
            seen.append(i)
    assert sorted(seen) == list(range(12))


def test_recomputation_from_the_module_weights_matches_the_batch(bench):
    from attnviz.capture.batch import attention_modules

    loaded = bench.model("induction")
    texts = fresh_texts(loaded, 8, seed=2)
    for layer, attn in enumerate(attention_modules(loaded.model)["self"]):
        w = weights_from_module(attn)
        for _, rec in held_out_records(loaded, texts):
            r = recompute_attention(rec["x"][layer], rec["mask"][layer], w)
            assert max_err(r["P"], rec["probs"][layer]) < 1e-5 and max_err(r["out"], rec["out"][layer]) < 1e-4
            assert r["P"].shape == rec["probs"][layer].shape


def test_head_scores_equal_the_traces_logits(bench):
    from attnviz.analysis.scaling import head_scores

    loaded = bench.model("coref")
    texts = fresh_texts(loaded, 4, seed=9)
    for idx, rec in held_out_records(loaded, texts, keep=("q", "k", "mask")):
        for j, i in enumerate(idx):
            trace = trace_text(loaded, texts[i])
            scale = float(trace.meta.get("scale", 0)) or 1 / np.sqrt(trace.meta["d_head"])
            scores, valid = head_scores(rec["q"][0][[j]], rec["k"][0][[j]], rec["mask"][0], 2)
            np.testing.assert_allclose(scores[0] * scale, np.asarray(trace["L0.logits"], np.float64)[2], atol=1e-5)
            assert valid.all()


def test_batched_permutation_error_equals_permute_tokens(bench):
    from attnviz.whatif import WhatIf, permute_tokens

    loaded = bench.model("order-sentiment")  # with positions: the error is large, so equality means something
    texts = fresh_texts(loaded, 6, seed=4)
    want = max(permute_tokens(loaded, t, whatif=WhatIf(), seed=i).max_error for i, t in enumerate(texts))
    assert want > 1e-2
    assert held_out_permutation_error(loaded, texts) == pytest.approx(want, abs=1e-5)
    assert held_out_permutation_error(bench.model("order-sentiment-nopos"), texts) < 1e-5


def _textbook_sinusoids(n: int, d: int) -> np.ndarray:
    """PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)), in float64."""
    p = np.arange(n, dtype=np.float64)[:, None]
    angle = p / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)[None, :]
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def test_the_positional_table_in_the_trace_is_the_models_buffer_and_the_formula(bench):
    from attnviz.models.blocks import PositionalEncoding

    loaded = bench.model("induction")
    trace = trace_text(loaded, "dragonflydragonfly")
    table = trace["emb.pos_table"]
    n, d = loaded.config.max_len, loaded.config.d_model
    assert table.shape == (n, d) and n > len(trace.tokens)  # every position the model holds, not the input's
    buffer = next(m for m in loaded.model.modules() if isinstance(m, PositionalEncoding)).table.numpy()
    np.testing.assert_array_equal(table, buffer)
    np.testing.assert_allclose(table, _textbook_sinusoids(n, d), atol=2e-5)
    np.testing.assert_array_equal(trace["emb.pos"], table[: len(trace.tokens)])  # the input's rows


def test_the_lesson_benchmark_measures_every_claim(tmp_path):
    import json

    from attnviz.bench.lesson import measure_lesson_check

    path = tmp_path / "l.json"
    path.write_text(json.dumps({"format": "attnviz-lesson", "name": "l", "scenes": [
        {"title": "mask", "model": "induction", "text": "abcabc", "claim": {"kind": "causal-mask"}},
        {"title": "no claim", "model": "induction", "text": "abcabc"}]}), encoding="utf-8")
    figures = measure_lesson_check(str(path), n=3)
    assert figures["claims_holding"] == 1 and figures["scenes"] == 2
    assert [k for k in figures if k.startswith("scene ")] == ["scene 01 causal-mask s (cpu s)"]


def test_pos_encoding_data_is_the_whole_table_with_named_rows(bench, tmp_path):
    from attnviz.export.data import figure_data, write_figure_data
    from attnviz.selection import SelectionState

    loaded = bench.model("induction")
    n, d = loaded.config.max_len, loaded.config.d_model
    trace = trace_text(loaded, "abcabc")
    data = figure_data("pos-encoding", trace, SelectionState())
    assert data.main == "emb.pos_table" and data.arrays["emb.pos_table"].shape == (n, d)
    assert data.rows[0] == "0 [BOS]" and data.rows[6] == "6 c" and data.rows[7] == "7" and len(data.rows) == n
    np.testing.assert_allclose(data.arrays["emb.pos_table"], _textbook_sinusoids(n, d), atol=2e-5)
    csv = write_figure_data(tmp_path / "pe.csv", data).read_text(encoding="utf-8").splitlines()
    assert len(csv) == n + 1 and csv[0].startswith(",dim 0,dim 1")
