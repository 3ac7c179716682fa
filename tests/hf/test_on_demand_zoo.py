"""The test zoo's on-demand table: every family of ``tests/hf/tiny_models.py`` either has a test that its on-demand
blocks equal the model's own eager probabilities (≤ 1e-6), or keeps full maps up to a stated length and is refused
in one line beyond it. Families whose test lives here: GPT-OSS (learned sinks, a sliding window, grouped keys) and
Mistral (a sliding window, grouped keys), with negative controls (sinks dropped from the normaliser, window
dropped, a wrong kv mapping, a wrong normaliser)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture.on_demand import OnDemandProbs, ScoreRule, row_lse
from attnviz.hf.capture import capture_hf

from . import test_own_attention_on_demand  # its parametrised list (Falcon, Bloom, GPT-Neo)
from .on_demand_check import MPT, TOL, Pairs, assert_blocks_equal
from .tiny_models import INTERFACE, build
HERE = ["gpt_oss", "mistral"]
# keep full (heads, T, T) maps up to MAX_FULL_T and say so beyond (test_own_attention_on_demand,
# test_stated_limit.py): DeBERTa's disentangled terms, DeBERTa v1 read through the maps it returns
REFUSED_ABOVE = ["deberta-v2", "deberta-v2_separate", "deberta"]


def test_every_family_of_the_zoo_is_on_demand_or_refused_above_a_stated_length():
    from .factories import hf
    from .tiny_models import _configs

    zoo = set(_configs(hf()))
    tested = set(INTERFACE) | set(test_own_attention_on_demand.ON_DEMAND) \
        | set(MPT) | set(HERE) | {"swin"}  # swin: test_swin_first_window_on_demand below
    assert zoo - tested - set(REFUSED_ABOVE) == set(), "a family with neither an on-demand test nor a stated limit"
    assert not tested & set(REFUSED_ABOVE)


@pytest.fixture(scope="module")
def pair():
    return Pairs()


@pytest.mark.parametrize("name", HERE)
def test_on_demand_blocks_equal_the_models_own(pair, name):
    _, _, ref, fast = pair(name)
    assert_blocks_equal(fast, ref)
    windows = {"gpt_oss": (4, None), "mistral": (4, 4)}[name]  # GPT-OSS: a sliding layer, then a full one
    assert tuple(fast.meta["on_demand"][f"L{i}."]["window"] for i in range(2)) == windows
    assert fast["L0.k"].shape[0] == 2 and fast["L0.q"].shape[0] == 4  # keys per kv head, as the model stores them


def _rule(fast, prefix, **change):
    facts = {**fast.meta["on_demand"][prefix], **change}
    return ScoreRule(scale=facts["scale"], causal=facts["causal"], window=facts["window"])


@pytest.mark.parametrize("name", HERE)
def test_negative_controls_fail(pair, name):
    _, _, ref, fast = pair(name)
    want = ref.attentions[0][0].numpy()
    q, k, lse = fast["L0.q"], fast["L0.k"], fast["L0.lse"]
    assert np.abs(OnDemandProbs(q, k, lse, _rule(fast, "L0.")).full() - want).max() <= TOL
    bad = {"window dropped": OnDemandProbs(q, k, lse, _rule(fast, "L0.", window=None)),
           "wrong kv mapping": OnDemandProbs(q, k[::-1].copy(), lse, _rule(fast, "L0.")),
           "wrong normaliser": OnDemandProbs(q, k, lse + 0.05, _rule(fast, "L0."))}
    if name == "gpt_oss":  # the sinks enter only the normaliser: without them every row sums to 1
        assert want.sum(-1).max() < 1 - 1e-3
        bad["sinks dropped"] = OnDemandProbs(q, k, row_lse(q, k, _rule(fast, "L0.")), _rule(fast, "L0."))
    for what, probs in bad.items():
        assert np.abs(probs.full() - want).max() > 1e-3, what


def test_swin_first_window_on_demand():
    """Swin attends inside windows: the first window of each first-stage block, on demand, equals its own maps."""
    model, inputs = build("swin")
    with torch.no_grad():
        ref = model(**inputs, output_attentions=True)
    fast = capture_hf(model, inputs, ["x"] * 65, attention="on_demand")
    assert "L1.probs" in fast.deferred and "L1.probs" not in fast.arrays
    # transformers 5 returns one map per stage (its last block's, every window): window 0 of stage 1's
    np.testing.assert_allclose(fast.probs(1), ref.attentions[0][0].numpy(), rtol=0, atol=TOL)
    assert np.abs(fast.probs(0) - ref.attentions[0][0].numpy()).max() > 1e-3  # control: block 0 is another map
