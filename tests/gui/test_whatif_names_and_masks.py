"""What-if names what it compares and shows what the switch did (issue 36, findings 7 and 12): the
compared position is said in the verdict (a translation's is the one that wrote the last token, as the
Prediction panel shows), masked cells are hatched with no "0", and the "with the switches" map shows the
ablated head."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from walkthrough_fixtures import TEXT, gqa_decoder, show_widget  # noqa: E402,F401

from attnviz.gui.walkthrough import WhatIfPanel, sync_runner  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402


def _headings(panel) -> str:
    return " ".join(lab.text() for lab in panel.board.items if hasattr(lab, "text"))


def test_a_translation_is_compared_where_it_wrote_its_last_token_and_says_so(qtbot):
    from pathlib import Path

    from attnviz.analysis.decoder_positions import position_distribution
    from attnviz.whatif import prediction_row

    if not (Path(__file__).resolve().parents[2] / "assets/models/translate/config.json").exists():
        pytest.skip("the bundled translate model is not built")
    loaded = load_model("translate", device="cpu")
    panel = show_widget(qtbot, WhatIfPanel(run_async=sync_runner))
    panel.set_model(loaded)
    panel.set_input(text="the big dog sees a small cat")
    panel.rerun()
    c = panel.comparison
    row, where = prediction_row(c.before)
    shown, pos = position_distribution(c.before, None)  # what the Prediction panel shows
    np.testing.assert_array_equal(row, shown)
    assert pos == len(c.before.tokens) - 2 and f"decoder position {pos}" in where
    assert not np.array_equal(row, np.asarray(c.before["next_probs"][-1], np.float64))  # not the (end) row
    text = _headings(panel)
    assert f"decoder position {pos}" in text and "stays" in text
    top = c.top_before[0][0]
    assert top == "[EOS]"  # the position that wrote [EOS] predicts it, as the Prediction panel says


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
