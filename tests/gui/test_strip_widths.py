"""The token strip measures each chip once per font: its layout equals a fresh strip's, also after the
font changes (gui/panels/input_tokens.py)."""

from __future__ import annotations

from attnviz.gui.panels.input_tokens import TokenStripWidget
from attnviz.text.token_strip import StripData


def _widths(strip):
    return [r.width() for r in strip._rects]


def test_cached_chip_widths_equal_a_fresh_layout_and_follow_the_font(qtbot):
    data = StripData(["the", " cat", "sat", "the"], [5, 17, 230, 5], [["t+h", "th+e"], [], [], ["t+h", "th+e"]])
    strip = TokenStripWidget()
    qtbot.addWidget(strip)
    strip.set_data(data)
    strip.set_data(StripData(["the", " dog"], [5, 31]))
    strip.set_data(data)  # widths now from the cache
    fresh = TokenStripWidget()
    qtbot.addWidget(fresh)
    fresh.set_data(data)
    assert _widths(strip) == _widths(fresh) and strip.size() == fresh.size()
    font = strip.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    strip.setFont(font)
    big = TokenStripWidget()
    qtbot.addWidget(big)
    big.setFont(font)
    big.set_data(data)
    assert _widths(strip) == _widths(big) and _widths(big)[0] > _widths(fresh)[0]
    assert strip._tip(0) == "position 0: 'the' → id 5\nBPE merges: t+h → th+e"


def test_a_byte_level_models_merges_show_their_spaces_as_the_labels_do(qtbot):
    """A byte-level BPE model (GPT-2, Llama 3, SmolLM) writes a leading space as 'Ġ': the strip's merge line read
    "G+be Gbe+cause" at its small size (a 32 × 32 random Llama, 1920×1080). Shown as ␣, the mark every token label
    uses; the strip's data keeps the vocabulary's own pieces (the merges replay on them). Control: a merge without
    a marker is unchanged."""
    from attnviz.gui.panels.input_tokens import shown_merges

    data = StripData(["Ġbecause", "the"], [293, 5], [["Ġ+be", "c+au", "s+e", "Ġbe+cause"], ["t+h", "th+e"]])
    strip = TokenStripWidget()
    qtbot.addWidget(strip)
    strip.set_data(data)
    assert strip._tip(0) == "position 0: 'Ġbecause' → id 293\nBPE merges: ␣+be → c+au → s+e → ␣be+cause"
    assert shown_merges(data.merges[0]) == "␣+be c+au s+e ␣be+cause" and strip.data.merges[0][0] == "Ġ+be"
    assert shown_merges(data.merges[1]) == "t+h th+e"
    assert strip._tip(1).endswith("t+h → th+e")
