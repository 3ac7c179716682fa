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
