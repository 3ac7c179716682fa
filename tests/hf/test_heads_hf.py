"""``attnviz heads`` on Hugging Face folders: scored one input at a time through the hooks."""

import json

import numpy as np
import pytest

from attnviz.cli import main


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_heads_of_an_hf_text_model_equal_its_traces(family, hf_folders, hf_loaded, tmp_path, capsys):
    from attnviz.runtime import run_trace

    lines = ["the cat sat on the mat", "a dog ran to the cat and the dog sat"]
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    assert main(["heads", "--model", str(hf_folders[family]), "--corpus", str(corpus), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_inputs"] == 2
    loaded = hf_loaded[family]
    sinks = []
    for text in lines:
        tr = run_trace(loaded, text=text, precision="float32", rollout=False)
        P = np.stack([tr.probs(i) for i in range(tr.n_layers)]).astype(np.float64)
        sinks.append(P[:, :, 1:, 0].mean(-1))
    got = np.array([[h["scores"]["first_token"] for h in doc["heads"] if h["layer"] == layer]
                    for layer in range(len(sinks[0]))])
    np.testing.assert_allclose(got, np.mean(sinks, 0), atol=2e-5)
    assert all(h["scores"]["gradient_share"] is None for h in doc["heads"])


def test_hf_model_without_data_asks_for_a_corpus(hf_folders, capsys):
    assert main(["heads", "--model", str(hf_folders["bert"])]) == 2
    assert "--corpus" in capsys.readouterr().err


@pytest.mark.parametrize("family", ["vit", "deit"])
def test_heads_of_an_hf_vision_model_over_an_image_folder(family, hf_folders, tmp_path, capsys):
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(2):
        Image.fromarray(rng.integers(0, 256, (20, 20, 3), dtype=np.uint8)).save(tmp_path / f"i{i}.png")
    assert main(["heads", "--model", str(hf_folders[family]), "--images", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_inputs"] == 2
    assert all(h["scores"]["distance"] is not None and h["scores"]["distance"] >= 0 for h in doc["heads"])
