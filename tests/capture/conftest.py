"""Fixtures of the capture tests: every model kind the app supports, as a tiny seeded model and its trace."""

from __future__ import annotations

import pytest

from attnviz.capture import capture

from tests.models.tiny import build_tiny, make_inputs

# (id, kind, config overrides, padded keys): every model kind, padding masks, GQA and MQA
CASES = [
    ("encoder", "encoder", {}, 0),
    ("encoder-pad", "encoder", {}, 2),
    ("encoder-mqa-post", "encoder", {"n_kv_heads": 1, "norm": "post"}, 0),
    ("decoder", "decoder", {}, 0),
    ("decoder-gqa", "decoder", {"n_kv_heads": 2}, 0),
    ("decoder-pad-nobias", "decoder", {"attn_bias": False, "pos": "sinusoidal"}, 1),
    ("encoder-decoder", "encoder-decoder", {"n_kv_heads": 2}, 1),
    ("vit", "vit", {}, 0),
]


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def case(request):
    """(model, inputs, tokens, trace) for every model kind the app supports."""
    _, kind, overrides, pad = request.param
    model = build_tiny(kind, **overrides)
    inputs, tokens = make_inputs(model, pad=pad)
    return model, inputs, tokens, capture(model, inputs, tokens, precision="float32")
