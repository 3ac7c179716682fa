"""attnviz.from_attentions: what output_attentions, BertViz and CircuitsVis users hold, checked and drawn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError, InputError

TOKENS = ["the", "cat", "sat", "down"]


def _maps(layers=2, heads=3, t=4, causal=False, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((layers, heads, t, t)) + 0.05
    if causal:
        x = np.tril(x)
    return (x / x.sum(-1, keepdims=True)).astype(np.float32)  # (L, H, T, T), rows sum to 1


@pytest.mark.parametrize("layout", ["tuple-torch", "tuple-numpy-3d", "array", "tl-stack", "circuitsvis"])
def test_every_layout_gives_the_same_numbers(layout):
    maps = _maps()
    given = {"tuple-torch": lambda: (tuple(torch.from_numpy(m[None]) for m in maps), TOKENS),
             "tuple-numpy-3d": lambda: (list(maps), TOKENS),
             "array": lambda: (maps, TOKENS),
             "tl-stack": lambda: (torch.from_numpy(maps[:, None]), TOKENS)}
    if layout == "circuitsvis":  # attention_patterns(tokens, attention): one layer, tokens first
        t = attnviz.from_attentions(TOKENS, maps[1])
        np.testing.assert_array_equal(t.probs(0), maps[1])
        return
    t = attnviz.from_attentions(*given[layout]())
    assert t.tokens == TOKENS and t.meta["n_layers"] == 2 and t.meta["kind"] == "encoder"
    for i in range(2):
        np.testing.assert_array_equal(t.probs(i), maps[i])
    assert not np.array_equal(t.probs(0), maps[1])  # negative control: layers kept apart


def test_the_callers_array_is_copied_and_the_trace_cannot_be_changed():
    maps = _maps()
    t = attnviz.from_attentions(maps, TOKENS)
    maps[:] = 0.25  # the caller reuses their array
    assert not np.allclose(t.probs(0), 0.25)
    p = t["L1.probs"]
    with pytest.raises(ValueError):
        p /= p.max(-1, keepdims=True)
    np.testing.assert_allclose(t.probs(1).sum(-1), 1, atol=1e-6)


def test_causal_maps_are_a_decoder_with_its_mask():
    t = attnviz.from_attentions(_maps(causal=True), TOKENS)
    assert t.meta["kind"] == "decoder" and t.meta["causal"]
    assert np.isneginf(t["L0.mask"][0, 1]) and t["L0.mask"][1, 0] == 0
    assert attnviz.from_attentions(_maps(), TOKENS).meta["causal"] is False  # negative control


@pytest.mark.parametrize("make, needle", [
    (lambda m: (m * 2, TOKENS), "outside [0, 1]"),
    (lambda m: (m * 0.9, TOKENS), "must sum to 1"),
    (lambda m: (np.where(m > 0.3, np.nan, m), TOKENS), "NaN or infinite"),
    (lambda m: (m, TOKENS[:3]), "are 4×4 maps but there are 3 query and 3 key tokens"),
    (lambda m: (m, "the cat sat down"), "tokens must be a list of str"),
    (lambda m: (m[0, 0], TOKENS), "expected (layers, heads, T, T)"),
    (lambda m: ((m[0], m[1, :2]), TOKENS), "differ in shape"),
    (lambda m: (tuple(np.stack([x, x]) for x in m), TOKENS), "hold a batch of 2"),
    (lambda m: (None, TOKENS), "attentions is None"),
    (lambda m: ([], TOKENS), "attentions is empty"),
])
def test_bad_attentions_are_one_line(make, needle):
    with pytest.raises(InputError) as err:
        attnviz.from_attentions(*make(_maps()))
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_views_needing_more_refuse_naming_what_they_need():
    t = attnviz.from_attentions(_maps(), TOKENS)
    with pytest.raises(AttnvizError, match=r"'steps' view needs q, k and v \(the walkthrough\)"):
        t.figure("steps")
    with pytest.raises(AttnvizError, match="'token-pca' view needs the embeddings"):
        t.figure("token-pca")
    assert t.figure("head-map", layer=1, head=2).to_bytes("png").startswith(b"\x89PNG")


def test_encoder_decoder_attentions():
    dec, cross, enc = _maps(t=3, causal=True), _maps(t=4)[:, :, :3, :], _maps(t=4, seed=2)
    cross = cross / cross.sum(-1, keepdims=True)
    t = attnviz.from_attentions(dec, ["<s>", "le", "chat"], cross_attentions=cross, encoder_attentions=enc,
                                src_tokens=TOKENS)
    assert t.meta["kind"] == "encoder-decoder" and t.probs(1, "cross").shape == (3, 3, 4)
    np.testing.assert_array_equal(t.probs(0, "enc"), enc[0])
    with pytest.raises(InputError, match="together"):
        attnviz.from_attentions(dec, ["<s>", "le", "chat"], cross_attentions=cross)


def test_output_attentions_of_a_model_give_the_models_figures(tmp_path):
    """The tuple ``output_attentions`` returns draws the same head map as attnviz's own trace of the model."""
    tf = pytest.importorskip("transformers")
    from tests.hf.factories import TEXT, make_model

    path = make_model("gpt2", tmp_path / "gpt2")
    traced = attnviz.load(path, device="cpu").trace(TEXT)
    model = tf.GPT2LMHeadModel.from_pretrained(str(path), attn_implementation="eager").eval()
    tok = tf.AutoTokenizer.from_pretrained(str(path))
    ids = tok(TEXT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    given = attnviz.from_attentions(out.attentions, tok.convert_ids_to_tokens(ids[0]), name=traced.meta["model_name"])
    assert given.tokens == traced.tokens
    for i in range(2):
        np.testing.assert_allclose(given.probs(i), traced.probs(i), atol=1e-6)
    same = given.figure("head-map", layer=1, head=2, size=(640, 360)).to_bytes("png")
    assert same == traced.figure("head-map", layer=1, head=2, size=(640, 360)).to_bytes("png")
    other = given.figure("head-map", layer=1, head=1, size=(640, 360)).to_bytes("png")
    assert other != same  # negative control
