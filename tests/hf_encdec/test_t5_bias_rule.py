"""T5's relative position bias as its bucket table and rule (no (H, T, T) array): with q, k and each row's
log-sum-exp (read from one column of the model's own probabilities: lse_i = s_i0 − log p_i0), the
encoder's and the decoder's self-attention probabilities are reproduced; without the bias they are not."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.capture.on_demand import OnDemandProbs, ScoreRule

from .factories import SOURCE


@pytest.mark.parametrize("part,prefix,stack", [("enc", "enc.L0.", "encoder"), ("self", "L0.", "decoder")])
def test_t5_bucket_rule_reproduces_probabilities(encdec_loaded, part, prefix, stack):
    from attnviz.runtime import run_trace

    loaded = encdec_loaded("t5")
    trace = run_trace(loaded, text=SOURCE, rollout=False, precision="float32")
    attn = getattr(loaded.model, stack).block[0].layer[0].SelfAttention
    cfg = loaded.model.config
    table = attn.relative_attention_bias.weight.detach().numpy()  # (n_buckets, H)
    rule = ScoreRule(scale=trace.meta["scale"], causal=stack == "decoder", rel_table=table,
                     rel_rule={"bidirectional": stack == "encoder", "num_buckets": cfg.relative_attention_num_buckets,
                               "max_distance": cfg.relative_attention_max_distance})
    q, k, want = trace[prefix + "q"], trace[prefix + "k"], trace[prefix + "probs"].astype(np.float64)
    H, T, _ = want.shape
    rows, cols = np.arange(T), np.arange(T)
    # the rule's bias equals the bias the model added (the trace keeps it as an array for short inputs)
    np.testing.assert_allclose(rule.added(np.arange(H), rows, cols), trace[prefix + "bias"][:, :T, :T], atol=1e-6)
    s0 = np.einsum("htd,hd->ht", q.astype(np.float64), k[:, 0].astype(np.float64)) * rule.scale \
        + rule.added(np.arange(H), rows, cols[:1])[:, :, 0]
    lse = (s0 - np.log(want[:, :, 0])).astype(np.float32)  # key 0 is visible from every query
    np.testing.assert_allclose(OnDemandProbs(q, k, lse, rule).full(), want, rtol=0, atol=1e-6)
    dropped = ScoreRule(scale=rule.scale, causal=rule.causal)  # negative control: the bias left out
    assert np.abs(OnDemandProbs(q, k, lse, dropped).full() - want).max() > 1e-3
