"""What-if shows what the switch did (issue 36, findings 7 and 12): masked cells are hatched with no "0",
and the "with the switches" map shows the ablated head. The position compared: test_whatif_query_position.py."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from walkthrough_fixtures import TEXT, gqa_decoder, show_widget  # noqa: E402,F401

from attnviz.gui.walkthrough import WhatIfPanel, sync_runner  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402


def _headings(panel) -> str:
    return " ".join(lab.text() for lab in panel.board.items if hasattr(lab, "text"))


def test_masked_cells_are_hatched_without_a_number_and_the_ablated_head_is_shown(gqa_decoder, qtbot):
    loaded = load_model(gqa_decoder, device="cpu")
    panel = show_widget(qtbot, WhatIfPanel(run_async=sync_runner), size=(1400, 900))
    panel.set_model(loaded)
    panel.set_input(text=TEXT)
    panel.selection.update(layer=1, head=0)
    panel.head_checks[(0, 1)].setChecked(True)
    panel.rerun()
    before, after = panel.grids["P_before"], panel.grids["P_after"]
    assert "L0 h1" in after.title and "switched off" in after.title  # the ablated head, not L1 h0
    assert after.frame_colour is not None
    causal = np.triu(np.ones(before.values.shape, bool), 1)  # a decoder: keys after the query are masked
    np.testing.assert_array_equal(before.masked, causal)
    r, c = np.argwhere(causal)[0]
    assert before.values[r, c] == 0.0 and before.cell_text(r, c) == ""  # no "0" written in it
    assert before.cell_text(0, 0) != ""  # negative control: an unmasked cell keeps its number
    assert "switched off" in _headings(panel) and "moved most" in _headings(panel)


def test_translates_switches_name_the_part_they_switch_off(qtbot):
    """translate's boxes zero decoder self-attention heads while the walkthrough stands on cross-attention: the
    caption said only "Ablate heads" (a40). Control: coref (one stack) names
    no part."""
    from whatif_fixtures import whatif_panel

    panel = whatif_panel(qtbot, "translate", (1400, 900))
    assert "decoder self-attention" in panel.heads_caption.text()
    panel.head_checks[(1, 0)].setChecked(True)
    panel.rerun()
    # the note need not say it again: the maps' titles name the part ("… L1 h0 — decoder self-attention · 10 × 10")
    qtbot.waitUntil(lambda: "decoder self-attention" in panel.grids["P_after"].subtitle, timeout=30_000)
    coref = whatif_panel(qtbot, "coref", (1400, 900))
    assert "Ablate heads" in coref.heads_caption.text() and "attention" not in coref.heads_caption.text()

