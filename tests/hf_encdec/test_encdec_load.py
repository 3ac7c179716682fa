"""Loading Hugging Face encoder–decoder folders: base models get the language-model head that shares
their embeddings; what attnviz cannot show is refused in one line (exit 2 on the command line)."""

from __future__ import annotations

import json

import pytest

from attnviz.cli import main

from .factories import SOURCE, TARGET, hf, save_quietly, word_tokenizer


@pytest.mark.parametrize("family,base", [("t5", "T5Model"), ("bart", "BartModel")])
def test_a_base_model_folder_opens_with_its_tied_head(family, base, encdec_loaded, tmp_path):
    from attnviz.runtime import load_model, run_trace

    tf = hf()
    full = encdec_loaded(family).model
    model = getattr(tf, base)(full.config)
    state = {k[len("model."):] if k.startswith("model.") else k: v for k, v in full.state_dict().items()}
    model.load_state_dict({k: v for k, v in state.items() if k in model.state_dict()}, strict=True)
    save_quietly(model, tmp_path / base)
    save_quietly(word_tokenizer(family)[0], tmp_path / base)
    loaded = load_model(str(tmp_path / base), device="cpu")
    assert loaded.config.kind == "encoder-decoder" and type(loaded.model).__name__ != base
    got = run_trace(loaded, text=SOURCE, target_text=TARGET, rollout=False)
    ref = run_trace(encdec_loaded(family), text=SOURCE, target_text=TARGET, rollout=False)
    assert got.tokens == ref.tokens
    assert abs(got["next_probs"] - ref["next_probs"]).max() <= 1e-6  # the same head: the shared embeddings


def test_unequal_encoder_and_decoder_heads_are_refused_in_one_line(encdec_folders, tmp_path, capsys):
    import shutil

    folder = tmp_path / "bart-heads"
    shutil.copytree(encdec_folders["bart"], folder)
    doc = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    doc["decoder_attention_heads"] = 2
    (folder / "config.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["trace", "--model", str(folder), "--text", SOURCE, "-o", str(tmp_path / "t.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "4 encoder heads but 2 decoder heads" in err[0]


def test_a_family_outside_the_attention_interface_gives_probabilities_and_says_what_is_missing():
    """FSMT computes attention inside its modules: every part's probabilities (the model's own), and one
    line naming what was not captured; steps on it says so (analysis.steps)."""
    import numpy as np
    import torch

    from attnviz.analysis.steps import compute_six_steps
    from attnviz.errors import InputError
    from attnviz.hf.encdec_capture import capture_encdec
    from attnviz.hf.encdec_model import describe_encdec

    tf = hf()
    torch.manual_seed(0)
    model = tf.FSMTForConditionalGeneration(tf.FSMTConfig(
        src_vocab_size=40, tgt_vocab_size=40, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
        langs=["en", "de"])).eval()
    model.cfg = describe_encdec(model.config, "FSMTForConditionalGeneration")
    src, dec = torch.tensor([[5, 6, 7, 8, 2]]), torch.tensor([[2, 10, 11]])
    trace = capture_encdec(model, {"input_ids": src, "decoder_input_ids": dec}, ["a", "b", "c"])
    with torch.no_grad():
        ref = model(input_ids=src, decoder_input_ids=dec, output_attentions=True, use_cache=False)
    for part, maps in (("enc", ref.encoder_attentions), ("self", ref.decoder_attentions),
                       ("cross", ref.cross_attentions)):
        for i, m in enumerate(maps):
            key = {"enc": f"enc.L{i}.", "self": f"L{i}.", "cross": f"L{i}.cross."}[part] + "probs"
            assert np.abs(trace[key] - m[0].numpy()).max() <= 1e-6
    assert not trace.meta["qkv_available"] and "not captured: x, q, k, v" in trace.meta["notice"]
    assert len(trace.meta["missing"]) == 1
    with pytest.raises(InputError):
        compute_six_steps(trace, 0, 0, 0, part="cross")
