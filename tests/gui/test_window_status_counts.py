"""The status line after a run counts in words that agree with the number: coref-emergent (2 layers × 1
head) read "2 layers × 1 heads" (seen at 1920×1080)."""

from __future__ import annotations

from types import SimpleNamespace

from attnviz.gui.window.shown_trace import run_summary


def _trace(positions: int, layers: int, heads: int):
    return SimpleNamespace(description=SimpleNamespace(model_name="m"), tokens=["t"] * positions,
                           n_layers=layers, n_heads=heads, src_tokens=[])


def test_one_head_is_a_head():
    assert run_summary(_trace(12, 2, 1), 0.007) == "m · 12 positions · 2 layers × 1 head · run 7 ms"


def test_many_stay_plural_and_one_layer_is_a_layer():  # the negative control, and the other count
    assert run_summary(_trace(12, 2, 4), 0.043) == "m · 12 positions · 2 layers × 4 heads · run 43 ms"
    assert run_summary(_trace(1, 1, 2), 0.0) == "m · 1 position · 1 layer × 2 heads · run 0 ms"
