"""What-if switches: applied to the model, restored exactly (even on errors), and they do what the lectures say."""

import numpy as np
import pytest
import torch

from attnviz.errors import InputError
from attnviz.models import ModelConfig, build_model
from attnviz.models.attention import Attention
from attnviz.models.blocks import PositionalEncoding
from attnviz.models.checkpoint import LoadedModel
from attnviz.text import Tokenizer
from attnviz.whatif import WhatIf, applied, compare_whatif, permute_tokens, run_whatif, top_predictions

TEXT = "the cat sat on the mat because it was tired"


def _loaded(kind="encoder", std=0.3, seed=0, **overrides):
    """A small model with weights spread like a trained one (the 0.02 init attends almost uniformly)."""
    tok = Tokenizer.build("word", [TEXT], prefix=["[CLS]"] if kind == "encoder" else [])
    cfg = dict(kind=kind, vocab_size=len(tok.vocab), n_layers=2, n_heads=4, d_model=16, max_len=16,
               mlp_ratio=2.0, n_classes=3, head="lm" if kind == "decoder" else "classify")
    torch.manual_seed(seed)
    model = build_model(ModelConfig(**{**cfg, **overrides}))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, std)
    return LoadedModel(model=model.eval(), config=model.cfg, info={"name": "tiny", "labels": ["a", "b", "c"]},
                       tokenizer=tok, device=torch.device("cpu"))


def _flags(model):
    return ([(m.scale, m.causal, m.head_gate, m.fused, m.record) for m in model.modules() if isinstance(m, Attention)],
            [m.enabled for m in model.modules() if isinstance(m, PositionalEncoding)])


def _state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


EVERYTHING = WhatIf(scale="none", temperature=0.5, causal=False, positional=False, ablate={(0, 1), (1, 3)})


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_switches_are_applied_then_restored_exactly(kind):
    loaded = _loaded(kind)
    model = loaded.model
    flags, state = _flags(model), _state(model)
    with applied(model, EVERYTHING):
        attns = [m for m in model.modules() if isinstance(m, Attention)]
        assert all(m.scale == pytest.approx(2.0) for m in attns)  # none → 1.0, T = 0.5 → × 2
        assert not any(m.causal for m in attns)
        assert not any(m.enabled for m in model.modules() if isinstance(m, PositionalEncoding))
        assert model.stack.blocks[0].attn.head_gate.tolist() == [1, 0, 1, 1]
        assert model.stack.blocks[1].attn.head_gate.tolist() == [1, 1, 1, 0]
    assert _flags(model) == flags
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k])


def test_restored_when_the_block_raises():
    model = _loaded().model
    flags = _flags(model)
    with pytest.raises(RuntimeError):
        with applied(model, EVERYTHING):
            raise RuntimeError("boom")
    assert _flags(model) == flags


def test_bad_ablation_changes_nothing():
    model = _loaded().model
    flags = _flags(model)
    with pytest.raises(InputError, match="layer 5 head 0"):
        with applied(model, WhatIf(ablate={(5, 0)})):
            pass
    assert _flags(model) == flags
    with pytest.raises(InputError, match="temperature"):
        WhatIf(temperature=0)


def test_default_whatif_changes_nothing():
    """The default what-if against runs that never went through the switches: a plain trace, and the
    model's own fused forward (not the capture path)."""
    from attnviz.runtime import run_trace

    loaded = _loaded()
    a = run_whatif(loaded, WhatIf(), TEXT)
    plain = run_trace(loaded, text=TEXT, precision="float32", rollout=False)
    np.testing.assert_array_equal(a["prediction"], plain["prediction"])
    for layer in range(2):
        np.testing.assert_array_equal(a.probs(layer), plain.probs(layer))
    assert a.meta["whatif"] == "as trained"
    ids = torch.tensor([loaded.tokenizer.encode(TEXT).ids])
    with torch.no_grad():
        own = torch.softmax(loaded.model(ids).float(), dim=-1)[0].numpy()  # (C,): the classifier's output
    np.testing.assert_allclose(a["prediction"], own, atol=1e-6)
    # negative control: a switch that matters moves the prediction away from the plain run
    off = run_whatif(loaded, WhatIf(ablate={(layer, h) for layer in range(2) for h in range(4)}), TEXT)
    assert np.abs(off["prediction"] - plain["prediction"]).max() > 1e-3


def test_ablating_every_head_changes_the_prediction():
    loaded = _loaded()
    all_heads = {(layer, h) for layer in range(2) for h in range(4)}
    cmp = compare_whatif(loaded, WhatIf(ablate=all_heads), TEXT)
    assert cmp.changed > 0.01
    for layer in range(2):  # the attention sub-layer adds only b_O: every head's z is gone
        np.testing.assert_array_equal(cmp.after[f"L{layer}.out"],
                                      np.broadcast_to(cmp.after[f"L{layer}.b_o"], cmp.after[f"L{layer}.out"].shape))
    # ablation also acts on the fused path used for training and plain inference
    ids = torch.tensor([loaded.tokenizer.encode(TEXT).ids])
    with torch.no_grad():
        plain = loaded.model(ids)
        with applied(loaded.model, WhatIf(ablate=all_heads)):
            gated = loaded.model(ids)
    assert not torch.allclose(plain, gated)
    assert cmp.top_before[0][0] in ("a", "b", "c")


def test_no_scaling_saturates_softmax():
    cmp = compare_whatif(_loaded(), WhatIf(scale="none"), TEXT)
    assert cmp.after.meta["scale"] == 1.0 and cmp.before.meta["scale"] == pytest.approx(0.5)
    assert cmp.entropy_after.mean() < cmp.entropy_before.mean() - 0.05
    hot = compare_whatif(_loaded(), WhatIf(temperature=4.0), TEXT)  # and a high temperature flattens it
    assert hot.entropy_after.mean() > hot.entropy_before.mean()


def test_causal_switch_on_a_decoder():
    loaded = _loaded("decoder")
    base = run_whatif(loaded, WhatIf(), TEXT)
    off = run_whatif(loaded, WhatIf(causal=False), TEXT)
    assert np.isneginf(base["L0.mask"][0, 1]) and np.all(off["L0.mask"] == 0)
    assert off["L0.probs"][0, 0, 1] > 0
    assert not np.allclose(base["prediction"], off["prediction"])
    top = top_predictions(base, loaded, k=3)
    assert len(top) == 3 and all(lbl in loaded.tokenizer.vocab for lbl, _ in top)


def test_permutation_equivariant_only_without_positions():
    loaded = _loaded()
    off = permute_tokens(loaded, TEXT, seed=1)
    assert off.max_error <= 1e-5 and off.equivariant
    R = np.eye(len(off.perm))[off.perm]
    np.testing.assert_allclose(off.trace.probs(0), R @ off.probs_orig[0] @ R.T, atol=1e-5)
    assert off.permuted_tokens == [off.tokens[i] for i in off.perm]
    on = permute_tokens(loaded, TEXT, perm=off.perm, whatif=WhatIf())
    assert on.max_error > 1e-3 and not on.equivariant


def test_permutation_on_a_decoder_needs_the_mask_off():
    loaded = _loaded("decoder")
    perm = np.arange(len(TEXT.split()))[::-1].copy()
    assert not permute_tokens(loaded, TEXT, perm=perm).equivariant  # the causal mask is not permuted
    assert permute_tokens(loaded, TEXT, perm=perm, whatif=WhatIf(positional=False, causal=False)).equivariant


def test_permutation_rejects_a_non_permutation():
    with pytest.raises(InputError, match="not a permutation"):
        permute_tokens(_loaded(), TEXT, perm=[0, 0, 1])
