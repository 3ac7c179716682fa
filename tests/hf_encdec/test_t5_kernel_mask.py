"""T5 on demand without per-layer work the model does not do: every layer of a stack gets a new view of one
(1, H, T, T) bias, so the capture describes it (zero? the bucket rule?) once per stack, keyed by storage, and hands
the kernel one contiguous copy per stack (the CPU kernel reads a strided mask at about half its speed). The
probabilities stay equal to the model's own (test_encdec_on_demand.py); here the work is counted."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.hf.encdec_capture import capture_encdec

from .test_encdec_on_demand import _inputs, _reference, _tol


def test_each_stacks_bias_is_described_once_and_copied_once(encdec_loaded, monkeypatch):
    import attnviz.capture.attention_kernel as kernel_mod
    import attnviz.hf.attention_record as rec_mod
    import attnviz.hf.encdec_rule as rule_mod

    loaded = encdec_loaded("t5")
    prep = _inputs(loaded)
    n_enc, n_dec = loaded.model.config.num_layers, loaded.model.config.num_decoder_layers
    assert n_enc >= 2 and n_dec >= 2  # else "once per stack" and "once per layer" could not differ
    matched, zeros, masks = [], [], []
    real_matches, real_zero, real_kernel = rule_mod.RelativeTable.matches, rule_mod._zero, kernel_mod.attention_with_lse
    monkeypatch.setattr(rule_mod.RelativeTable, "matches", lambda self, b: matched.append(1) or real_matches(self, b))
    monkeypatch.setattr(rule_mod, "_zero", lambda t: zeros.append(1) or real_zero(t))

    def spy(q, k, v, scale, is_causal=False, mask=None, *a, **kw):
        masks.append((mask, is_causal))
        return real_kernel(q, k, v, scale, is_causal, mask, *a, **kw)
    monkeypatch.setattr(rec_mod, "attention_with_lse", spy)
    fast = capture_encdec(loaded.model, prep.inputs, prep.tokens, attention="on_demand")
    # encoder self and decoder self: the bucket rule checked once each; zero checked once per stack's bias
    # (encoder, decoder self, the cross-attention's zeros): once per layer would be 2·n_enc + n_dec and more
    assert len(matched) == 2 and len(zeros) == 3
    assert len(masks) == 2 * n_dec + n_enc and all(m is not None and m.is_contiguous() for m, _ in masks)
    enc = [m for m, _ in masks[:n_enc]]
    assert all(m is enc[0] for m in enc)  # one copy for the encoder's layers
    self_masks = [m for m, _ in masks[n_enc::2]]
    assert all(m is self_masks[0] for m in self_masks) and not any(c for _, c in masks[n_enc::2])
    # the causal rule is in the decoder's kernel mask: every cell after the diagonal is −inf
    later = torch.ones(self_masks[0].shape[-2:], dtype=torch.bool).triu(1)
    assert bool(torch.isneginf(self_masks[0][..., later]).all())
    ref = _reference(loaded.model, prep.inputs)  # and the numbers are the model's
    for i, want in enumerate(ref.decoder_attentions):
        np.testing.assert_allclose(fast.probs(i, "self"), want[0].numpy(), rtol=0, atol=_tol(fast[f"L{i}.lse"]))
