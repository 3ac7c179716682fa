"""A capture checks each structural reading once per kind of layer (attnviz.hf.check_memo): the first layer of a
kind is checked, the others of that kind are read the same way; every capture checks afresh; a failed check is
never remembered; a reading that needed a per-layer constant (OPT's q factor) is checked in every layer.
Controls: a fresh capture checks again; a layer whose check failed does not stop the next layer's check."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

from attnviz.hf import projections  # noqa: E402
from attnviz.hf.capture import capture_hf  # noqa: E402
from attnviz.hf.check_memo import CheckMemo, kind_of  # noqa: E402
from tests.hf.tiny_models import build, tokens_of  # noqa: E402


def _counting(monkeypatch, fail_first: bool = False) -> list:
    calls = []
    real = projections._check_qkv

    def spy(r, call, outs, q, k, v):
        calls.append(call.name)
        if fail_first and len(calls) == 1:
            return False  # as if layer 0's projections did not reproduce its queries
        return real(r, call, outs, q, k, v)
    monkeypatch.setattr(projections, "_check_qkv", spy)
    return calls


@pytest.mark.parametrize("attention", ["eager", "on_demand"])
def test_the_first_layer_of_a_kind_is_checked_and_the_others_read_the_same_way(monkeypatch, attention):
    model, inputs = build("llama")
    calls = _counting(monkeypatch)
    t = capture_hf(model, inputs, tokens_of(inputs, model), attention=attention)
    assert len(calls) == 1 and calls[0].endswith("layers.0.self_attn")
    for i in range(2):  # every layer read whole: weights, and (Llama) q/k before rotation
        assert t.arrays[f"L{i}.W_q"].shape == t.arrays["L0.W_q"].shape
        assert f"L{i}.rope_cos" in t.arrays
    assert not t.meta.get("missing")
    capture_hf(model, inputs, tokens_of(inputs, model), attention=attention)
    assert len(calls) == 2  # control: the next capture checks its own first layer again


def test_the_reading_of_an_unchecked_layer_equals_the_checked_reading(monkeypatch):
    model, inputs = build("gemma2")  # sliding and full layers of one class, soft-cap, 2 kv heads
    tokens = tokens_of(inputs, model)
    checked = capture_hf(model, inputs, tokens, attention="on_demand")
    monkeypatch.setattr(CheckMemo, "get", lambda self, kind, check: None)  # never trust: check every layer
    calls = _counting(monkeypatch)
    every = capture_hf(model, inputs, tokens, attention="on_demand")
    assert len(calls) == 2  # control: both layers checked when nothing is remembered
    assert sorted(checked.arrays) == sorted(every.arrays)
    assert checked.meta.get("recomputed") == every.meta.get("recomputed")
    for name in checked.arrays:
        np.testing.assert_array_equal(np.asarray(checked.arrays[name]), np.asarray(every.arrays[name]))


def test_a_failed_check_is_not_remembered(monkeypatch):
    model, inputs = build("llama")
    calls = _counting(monkeypatch, fail_first=True)
    t = capture_hf(model, inputs, tokens_of(inputs, model), attention="on_demand")
    assert len(calls) == 2  # layer 1 checked itself after layer 0 failed
    assert "L0.W_q" not in t.arrays and "L1.W_q" in t.arrays


def test_a_folded_query_constant_is_checked_in_every_layer(monkeypatch):
    model, inputs = build("opt")  # q = q_proj(x) · scaling, then scaling 1.0 in the call
    calls = _counting(monkeypatch)
    t = capture_hf(model, inputs, tokens_of(inputs, model), attention="eager")
    assert len(calls) == 2
    assert "L1.W_q" in t.arrays


def test_kinds_differ_by_what_decides_the_reading():
    import torch

    class Call:
        def __init__(self, module, heads, rope_width, proj=("k_proj", "o_proj", "q_proj", "v_proj")):
            self.module, self.columns, self.cross = module, None, False
            self.query, self.key = torch.zeros(1, heads, 5, 8), torch.zeros(1, 2, 5, 8)
            self.rope = None if rope_width is None else (torch.zeros(1, 5, rope_width), torch.zeros(1, 5, rope_width))
            self.proj = dict.fromkeys(proj)

    a, b = torch.nn.Linear(1, 1), torch.nn.Linear(1, 1)
    assert kind_of(Call(a, 4, 8)) == kind_of(Call(b, 4, 8))  # two layers of one class and shape: one kind
    assert kind_of(Call(a, 4, 8)) != kind_of(Call(a, 4, 4))  # half-width rotary tables
    assert kind_of(Call(a, 4, 8)) != kind_of(Call(a, 4, None))  # a layer without rotation (NoPE)
    assert kind_of(Call(a, 4, 8)) != kind_of(Call(a, 2, 8))  # other head counts
    assert kind_of(Call(a, 4, 8)) != kind_of(Call(torch.nn.Conv1d(1, 1, 1), 4, 8))  # another class
    assert kind_of(Call(a, 4, 8)) != kind_of(Call(a, 4, 8, proj=("k_proj", "q_norm", "q_proj", "v_proj")))
