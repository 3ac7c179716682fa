"""Greedy decoding with the key/value cache chooses exactly the tokens of the full re-run it replaces.

The full re-run (``cache=False``) is the reference: it decodes every token with the model's own forward
pass. The cache must agree on the bundled translation models over many inputs (single and padded
batches), on random seeded models of every architecture switch, under the what-if switches, and at the
stopping rules; where it cannot follow the forward pass it must not be used at all.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.models.attention import Attention
from attnviz.models.config import ModelConfig
from attnviz.models.kv_cache import DecoderCache, cache_usable
from attnviz.models.registry import build_model


def _random_model(kind: str, seed: int = 0, std: float = 0.4, **overrides):
    """A seeded model with weights spread wider than the training init, so the argmax is decisive."""
    cfg = dict(kind=kind, vocab_size=23, n_layers=2, n_heads=4, d_model=16, max_len=12, mlp_ratio=2.0, head="lm")
    if kind == "encoder-decoder":
        cfg.update(tgt_vocab_size=19, n_dec_layers=2)
    cfg.update(overrides)
    torch.manual_seed(seed)
    model = build_model(ModelConfig(**cfg))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 or (name.endswith("bias") and "ln" not in name and "norm" not in name):
                p.normal_(0.0, std)
    return model.eval()


def _padded_batch(rng, vocab: int, pad: int, batch: int, longest: int):
    """Rows of random lengths 1…longest, right-padded with ``pad``: (src, src_pad)."""
    lengths = rng.integers(1, longest + 1, size=batch)
    src = np.full((batch, int(lengths.max())), pad, dtype=np.int64)
    for i, n in enumerate(lengths):
        src[i, :n] = rng.choice([t for t in range(vocab) if t != pad], size=n)
    src = torch.from_numpy(src)
    return src, src == pad


def _both(model, *args, **kwargs):
    return model.generate(*args, cache=True, **kwargs), model.generate(*args, cache=False, **kwargs)


ARCHITECTURES = [
    dict(norm="pre"),
    dict(norm="post"),
    dict(norm="pre", n_kv_heads=2),  # grouped-query attention
    dict(norm="post", n_kv_heads=1, activation="relu"),  # multi-query attention
    dict(pos="sinusoidal", attn_bias=False, d_head=8),
    dict(pos="none", attn_scale=0.7),
    dict(norm="post", dropout=0.3),  # evaluation mode: dropout is the identity on both paths
]


@pytest.mark.parametrize("overrides", ARCHITECTURES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_cached_translation_matches_the_full_rerun_on_random_models(overrides):
    rng = np.random.default_rng(1)
    for seed in range(3):
        model = _random_model("encoder-decoder", seed=seed, **overrides)
        assert cache_usable(model, model.decoder, model.tgt_embed)
        for _ in range(4):
            src, pad = _padded_batch(rng, 23, 0, batch=6, longest=10)
            cached, full = _both(model, src, bos=1, eos=2, max_new=11, src_pad=pad)
            assert torch.equal(cached, full)
            one = src[:1, : int((~pad[0]).sum())]
            cached, full = _both(model, one, bos=1, eos=2, max_new=11)
            assert torch.equal(cached, full)


def test_cached_logits_equal_the_full_decoders_at_every_position():
    """Not only the argmax: the logits of each cached step are the full pass's, up to rounding."""
    model = _random_model("encoder-decoder", seed=5, norm="post", n_kv_heads=2)
    src, pad = _padded_batch(np.random.default_rng(2), 23, 0, batch=4, longest=9)
    tgt = torch.randint(0, 19, (4, 8), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        memory = model.encode(src, pad)
        full = model.decode(tgt, memory, src_pad=pad)  # (B, T, V), the teacher-forced forward pass
        kv = DecoderCache(model.decoder, model.tgt_embed, model.head, 4, 8, memory, pad)
        steps = torch.cat([kv.step(tgt[:, t : t + 1]) for t in range(8)], dim=1)
    np.testing.assert_allclose(steps.numpy(), full.numpy(), rtol=1e-5, atol=1e-5)


def test_stopping_rules_are_the_same_with_the_cache():
    model = _random_model("encoder-decoder", seed=3)
    src, pad = _padded_batch(np.random.default_rng(4), 23, 0, batch=5, longest=8)
    free = model.generate(src, bos=1, eos=-1, max_new=11, src_pad=pad, cache=False)  # never stops early
    for max_new in (0, 1, 4, 11):
        cached, full = _both(model, src, bos=1, eos=-1, max_new=max_new, src_pad=pad)
        assert torch.equal(cached, full) and cached.shape == (5, 1 + max_new)
    # a token the first row writes second serves as [EOS]: decoding goes on until every row has written it
    eos = int(free[0, 2])
    cached, full = _both(model, src, bos=1, eos=eos, max_new=11, src_pad=pad)
    assert torch.equal(cached, full)
    firsts = [next((k for k in range(1, 12) if int(row[k]) == eos), None) for row in free]
    stop = 11 if None in firsts else max(firsts)
    assert torch.equal(cached, free[:, : stop + 1])


def test_bundled_translation_models_choose_the_same_tokens_with_and_without_the_cache():
    from attnviz.runtime import load_model, prepare_text, task_of

    for name in ("reverse", "translate"):
        loaded = load_model(name)
        model, task = loaded.model, task_of(loaded)
        assert cache_usable(model, model.decoder, model.tgt_embed)
        rng = np.random.default_rng(0)
        kw = dict(bos=task.bos_id, eos=task.eos_id, max_new=loaded.config.max_len - 1)
        for _ in range(6):  # padded batches of held-out inputs, as the task's accuracy is scored
            batch = task.sample_batch("test", 24, rng)
            cached, full = _both(model, batch.inputs["src"], src_pad=batch.inputs["src_pad"], **kw)
            assert torch.equal(cached, full)
            assert not cached.is_inference()  # an ordinary tensor, as before
            for i in range(0, 24, 3):  # and one at a time, as the app runs them
                pad = batch.inputs["src_pad"][i]
                one = batch.inputs["src"][i : i + 1, : int((~pad).sum())]
                cached, full = _both(model, one, **kw)
                assert torch.equal(cached, full)
        for text in task.examples():
            if isinstance(text, str):
                src = prepare_text(loaded, text).inputs["src"]
                cached, full = _both(model, src, **kw)
                assert torch.equal(cached, full)


@pytest.mark.parametrize("switch", [
    dict(scale="none"), dict(temperature=0.3), dict(positional=False), dict(ablate={(0, 1), (1, 0)}),
    dict(scale="none", temperature=2.0, ablate={(1, 3)}),
])
def test_what_if_switches_give_the_same_tokens_with_the_cache(switch):
    from attnviz.whatif import WhatIf, applied

    model = _random_model("encoder-decoder", seed=7)
    src, pad = _padded_batch(np.random.default_rng(5), 23, 0, batch=6, longest=9)
    plain = model.generate(src, bos=1, eos=2, max_new=11, src_pad=pad, cache=False)
    with applied(model, WhatIf(**switch)):
        assert cache_usable(model, model.decoder, model.tgt_embed)
        cached, full = _both(model, src, bos=1, eos=2, max_new=11, src_pad=pad)
    assert torch.equal(cached, full)
    assert not torch.equal(full, plain)  # the switch really changed the decoding


def test_the_cache_stands_aside_where_it_cannot_follow_the_forward_pass():
    from attnviz.capture.record import recording
    from attnviz.whatif import WhatIf, applied

    model = _random_model("encoder-decoder", seed=8)
    src, pad = _padded_batch(np.random.default_rng(6), 23, 0, batch=4, longest=9)
    usable = lambda: cache_usable(model, model.decoder, model.tgt_embed)  # noqa: E731
    assert usable()
    with applied(model, WhatIf(causal=False)):  # every position sees the later ones: no cache can follow
        assert not usable()
        cached, full = _both(model, src, bos=1, eos=2, max_new=11, src_pad=pad)
        assert torch.equal(cached, full)
    with recording(model):
        assert not usable()
    handle = model.decoder.blocks[1].mlp.register_forward_hook(lambda m, i, o: o * 0.5)
    try:
        assert not usable()
        cached, full = _both(model, src, bos=1, eos=2, max_new=11, src_pad=pad)
        assert torch.equal(cached, full)
    finally:
        handle.remove()
    model.train()
    assert not usable()
    model.eval()
    next(m for m in model.modules() if isinstance(m, Attention)).fused = False
    assert not usable()


def test_the_cache_refuses_positions_past_the_table():
    model = _random_model("encoder-decoder", seed=9, max_len=5)
    with torch.no_grad():
        kv = DecoderCache(model.decoder, model.tgt_embed, model.head, 1, 8, model.encode(torch.tensor([[3, 4]])))
        for t in range(5):
            kv.step(torch.tensor([[t + 3]]))
        with pytest.raises(ValueError, match="beyond"):
            kv.step(torch.tensor([[3]]))


@pytest.mark.parametrize("overrides", ARCHITECTURES[:4], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_cached_language_model_generation_matches_the_full_rerun(overrides):
    model = _random_model("decoder", seed=11, **overrides)
    assert cache_usable(model, model.stack, model.embed)
    prompts = torch.randint(0, 23, (3, 4), generator=torch.Generator().manual_seed(1))
    # past max_len (12) the window slides and the cache hands over to the full re-run
    cached, full = _both(model, prompts, n_new=15)
    assert torch.equal(cached, full) and cached.shape == (3, 19)
    cached = model.generate(prompts, n_new=15, temperature=0.8, generator=torch.Generator().manual_seed(2))
    full = model.generate(prompts, n_new=15, temperature=0.8, generator=torch.Generator().manual_seed(2),
                          cache=False)
    assert torch.equal(cached, full)
    long_prompt = torch.randint(0, 23, (2, 14), generator=torch.Generator().manual_seed(3))
    cached, full = _both(model, long_prompt, n_new=3)
    assert torch.equal(cached, full)


def test_a_subclass_that_changes_the_decoder_is_decoded_without_the_cache():
    from attnviz.models.text import EncoderDecoder

    class Sharper(EncoderDecoder):
        def decode(self, tgt, memory, tgt_pad=None, src_pad=None):
            return 3.0 * super().decode(tgt, memory, tgt_pad, src_pad) - self.head.bias

    model = _random_model("encoder-decoder", seed=12)
    sharper = Sharper(model.cfg).eval()
    sharper.load_state_dict(model.state_dict())
    src, pad = _padded_batch(np.random.default_rng(7), 23, 0, batch=6, longest=9)
    cached, full = _both(sharper, src, bos=1, eos=2, max_new=11, src_pad=pad)
    assert torch.equal(cached, full)
    assert not torch.equal(full, model.generate(src, bos=1, eos=2, max_new=11, src_pad=pad))


def test_a_block_with_another_norm_is_decoded_without_the_cache():
    model = _random_model("encoder-decoder", seed=13)
    src, pad = _padded_batch(np.random.default_rng(8), 23, 0, batch=4, longest=9)
    plain = model.generate(src, bos=1, eos=2, max_new=11, src_pad=pad, cache=False)
    model.decoder.blocks[0].ln2 = torch.nn.RMSNorm(16).eval()
    assert not cache_usable(model, model.decoder, model.tgt_embed)
    cached, full = _both(model, src, bos=1, eos=2, max_new=11, src_pad=pad)
    assert torch.equal(cached, full) and not torch.equal(full, plain)
