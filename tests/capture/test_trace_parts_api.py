"""The Trace answers which parts it holds, their layer counts and whether a selection exists (one place)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.capture.trace import Trace
from attnviz.errors import InputError


def _trace(n_layers=2, n_enc=0, cross=False, heads=3, t=4, src=5):
    arrays = {"tokens": np.array([f"t{i}" for i in range(t)])}
    if n_enc:
        arrays["src_tokens"] = np.array([f"s{i}" for i in range(src)])
    for i in range(n_layers):
        arrays[f"L{i}.probs"] = np.full((heads, t, t), 1 / t, np.float32)
        if cross:
            arrays[f"L{i}.cross.probs"] = np.full((heads, t, src), 1 / src, np.float32)
    for i in range(n_enc):
        arrays[f"enc.L{i}.probs"] = np.full((heads, src, src), 1 / src, np.float32)
    meta = {"n_layers": n_layers, "n_enc_layers": n_enc, "n_heads": heads}
    return Trace(tokens=[f"t{i}" for i in range(t)], meta=meta, arrays=arrays)


def test_parts_and_layer_counts_of_a_single_stack():
    t = _trace(n_layers=3)
    assert t.parts == ("self",)
    assert t.layers_in("self") == 3
    assert len(t.all_probs()) == 3


def test_parts_and_layer_counts_of_an_encoder_decoder():
    t = _trace(n_layers=2, n_enc=4, cross=True)
    assert t.parts == ("enc", "cross", "self")
    assert (t.layers_in("enc"), t.layers_in("cross"), t.layers_in("self")) == (4, 2, 2)
    assert len(t.all_probs("enc")) == 4


@pytest.mark.parametrize("args, words", [
    (("cross", 0, 0), "no cross-attention"),
    (("enc", 0, 0), "no separate encoder"),
    (("self", 2, 0), "layer 2 does not exist"),
    (("self", -1, 0), "layer -1 does not exist"),
    (("self", 0, 3), "head 3 does not exist"),
    (("self", 0, 0, 4), "query 4 does not exist"),
    (("bogus", 0, 0), "unknown part"),
])
def test_invalid_selections_are_named(args, words):
    t = _trace()
    assert words in t.selection_error(*args)
    with pytest.raises(InputError, match=words):
        t.check_selection(*args)


def test_valid_selections_pass():
    t = _trace(n_layers=2, n_enc=3, cross=True)
    for part in t.parts:
        n_q = len(t.query_tokens(part))
        assert t.selection_error(part, t.layers_in(part) - 1, 2, n_q - 1) is None
        t.check_selection(part, 0, 0, None)
