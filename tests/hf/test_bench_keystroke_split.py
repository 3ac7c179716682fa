"""The BERT keystroke figure comes with the bare forward measured beside it (keystroke − forward is
attnviz's share): both are printed, for any Hugging Face folder, and the bare forward leaves the model
as the app runs it. Figures only: nothing here asserts a time."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def test_bare_forward_restores_the_attention_the_app_runs(tmp_path):
    pytest.importorskip("transformers")
    from attnviz.bench.hf import bare_forward, write_bert_base_folder
    from attnviz.runtime import load_model

    text = write_bert_base_folder(tmp_path / "bert", T=10, sizes=SMALL)
    loaded = load_model(str(tmp_path / "bert"))
    before = loaded.model.config._attn_implementation
    wall, cpu = bare_forward(loaded, text)
    assert wall > 0 and cpu >= 0 and loaded.model.config._attn_implementation == before


def test_keystroke_figure_prints_the_forward_and_the_overhead(tmp_path, qapp):
    pytest.importorskip("transformers")
    from attnviz.bench.gui import measure_keystroke
    from attnviz.bench.hf import write_bert_base_folder

    text = write_bert_base_folder(tmp_path / "bert", T=12, sizes=SMALL)
    fig = measure_keystroke(str(tmp_path / "bert"), n=2, text=text, forward=True)
    assert fig["keystroke_tokens"] == 12 and fig["keystroke_visible_views"] >= 1
    assert fig["keystroke_forward_ms_median"] > 0 and fig["keystroke_forward_cpu_ms_median"] >= 0
    assert fig["keystroke_overhead_ms"] == fig["keystroke_ms_median"] - fig["keystroke_forward_ms_median"]
    assert fig["keystroke_linear_floor_ms_median"] > 0


def test_linear_floor_runs_every_linear_layer_of_the_encoder_once(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    import torch

    from attnviz.bench.hf import linear_floor, write_bert_base_folder
    from attnviz.runtime import load_model

    text = write_bert_base_folder(tmp_path / "bert", T=10, sizes=SMALL)
    loaded = load_model(str(tmp_path / "bert"))
    seen = []
    hooks = [m.register_forward_hook(lambda m, i, o: seen.append((m, tuple(i[0].shape), tuple(o.shape))))
             for m in loaded.model.base_model.modules() if isinstance(m, torch.nn.Linear)]
    try:
        wall, cpu = linear_floor(loaded, text)
    finally:
        for h in hooks:
            h.remove()
    layers = [m for m in loaded.model.base_model.modules() if isinstance(m, torch.nn.Linear)]
    timed = seen[4:]  # after the warm-up calls
    assert [m for m, _, _ in timed] == layers and wall > 0 and cpu >= 0
    assert all(i == (1, 10, m.in_features) and o == (1, 10, m.out_features) for m, i, o in timed)
