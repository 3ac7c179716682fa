"""Encoder–decoders in the window: the selected decoder position drives the prediction panel and the
source token highlighted in the input strip (through cross-attention, not by index); rows read "→ token"."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.decoder_positions import attended_source, row_labels
from attnviz.io import bundled_models


def _translate_window(make_window, qtbot, monkeypatch):
    monkeypatch.delenv("ATTNVIZ_ASSETS", raising=False)  # the checkout's bundled models
    if "translate" not in bundled_models():
        pytest.skip("the bundled translate model is not built (make assets)")
    win = make_window(model="translate")
    qtbot.waitUntil(lambda: win.trace is not None and not win.lane.busy and win.walkthrough is not None,
                    timeout=120000)
    return win


def test_the_selected_decoder_position_drives_prediction_and_source(make_window, qtbot, monkeypatch):
    from attnviz.gui.panels.input_tokens import shown_token
    from attnviz.analysis.trace_parts import resolve

    win = _translate_window(make_window, qtbot, monkeypatch)
    trace = win.trace
    assert trace.kind == "encoder-decoder"
    last_layer = trace.n_layers - 1
    for pos in range(len(trace.tokens) - 1):
        win.selection.update(part="cross", layer=last_layer, head=0, query=pos)
        panel = win.prediction_panel
        assert panel.mode == "decoder-position"
        best = int(np.argmax(trace["next_probs"][pos]))
        assert panel.bars.entries[0][0] == best  # the distribution after *this* position
        assert f"→ {shown_token(trace.tokens[pos + 1])}" in panel.title.text()
        # the strip shows the source: its highlight is where this position looks, not the same index
        assert win.input_panel.strip.strip.selected == attended_source(trace, last_layer, 0, pos)
    # another head looks elsewhere: the highlight follows it
    win.selection.update(head=1)
    assert win.input_panel.strip.strip.selected == attended_source(trace, last_layer, 1, pos)
    # every view labels cross-attention rows by the token produced
    state = win.selection.state
    assert resolve(trace, state).query_tokens == row_labels(trace, "cross")
    # clicking a source token selects it as the key; the decoder position stays
    win.input_panel.token_clicked.emit(1)
    assert win.selection.key == 1 and win.selection.query == pos
    # encoder self-attention: the query is a source token itself, highlighted as it is
    win.selection.update(part="enc", query=3)
    assert win.input_panel.strip.strip.selected == 3
    win.input_panel.token_clicked.emit(2)
    assert win.selection.query == 2
