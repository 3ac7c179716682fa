"""The keystroke benchmark's Hugging Face folder: written locally, opened by the app's loader, T tokens exactly."""

from __future__ import annotations

import pytest


def test_bert_folder_loads_and_its_text_is_T_tokens(tmp_path):
    pytest.importorskip("transformers")
    from attnviz.bench.hf import write_bert_base_folder
    from attnviz.runtime import load_model, run_trace

    small = dict(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    text = write_bert_base_folder(tmp_path / "bert", T=20, sizes=small)
    loaded = load_model(str(tmp_path / "bert"))
    trace = run_trace(loaded, text=text)
    assert len(trace.tokens) == 20 and trace.tokens[0] == "[CLS]" and trace.tokens[-1] == "[SEP]"
    assert trace.tokens[1:-1] == text.split()  # every word is one vocabulary entry: nothing read as [UNK]
    assert trace.n_layers == 2 and trace.n_heads == 4
