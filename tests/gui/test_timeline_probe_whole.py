"""The training replay's Probe combo at 1280×720 (issue 36): probe, part, layer, head and the map's colours stood in
one line of the ~620 px replay, and the probe got a 54 px field ("the big d"). The controls now wrap under the probe,
which shows its whole sentence; a probe longer than the list's 60 characters ends in "…" with the whole text in the
item's and the combo's tooltip (a bare [:60] cut it mid-word)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QComboBox, QStyle, QStyleOptionComboBox  # noqa: E402

from attnviz.training.snapshots import Snapshots  # noqa: E402

LONG = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat"


def _snaps(texts) -> Snapshots:
    T, H = 4, 2
    arrays = {}
    for k in range(2):
        for j in range(len(texts)):
            for layer in range(2):
                arrays[f"s{k}.p{j}.L{layer}"] = np.full((H, T, T), 1 / T, np.float32)
                arrays[f"s{k}.p{j}.L{layer}.cross"] = np.full((H, T, T), 1 / T, np.float32)
                arrays[f"s{k}.p{j}.enc.L{layer}"] = np.full((H, T, T), 1 / T, np.float32)
    probes = [{"input": t, "tokens": list("wxyz"), "src_tokens": list("abcd")} for t in texts]
    return Snapshots(steps=[0, 50], probes=probes, parts=["self", "cross", "enc"], arrays=arrays)


def _field(cb: QComboBox) -> int:
    opt = QStyleOptionComboBox()
    cb.initStyleOption(opt)
    return cb.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField,
                                     cb).width()


def _timeline(qtbot, texts, width):
    from attnviz.gui.panels.attention_timeline import AttentionTimeline

    tl = AttentionTimeline()
    qtbot.addWidget(tl)
    tl.resize(width, 520)
    tl.show()
    qtbot.waitExposed(tl)
    tl.set_snapshots(_snaps(texts))
    for _ in range(10):
        QApplication.processEvents()
    return tl


@pytest.mark.parametrize("text", ["the big dog sees a small cat", "The animal didn't cross the street because it was too tired"])
def test_the_probe_shows_its_whole_sentence_in_a_1280x720_replay(qtbot, text):
    tl = _timeline(qtbot, [text], 620)  # the replay's width in a 1280×720 window (measured under Xvfb)
    box = tl.probe_box
    assert box.currentText() == text
    assert _field(box) >= box.fontMetrics().horizontalAdvance(text), (_field(box), text)
    assert box.geometry().right() <= tl.width() and tl.part_box.isVisible()
    assert text in box.toolTip()


def test_a_wide_replay_keeps_one_line(qtbot):
    """The control: at 1920×1080 (~1100 px) the controls stand in one line beside the probe."""
    tl = _timeline(qtbot, ["the big dog sees a small cat"], 1100)
    assert tl.probe_box.mapTo(tl, tl.probe_box.rect().topLeft()).y() == \
        tl.head_box.mapTo(tl, tl.head_box.rect().topLeft()).y()


def test_a_long_probe_ends_in_an_ellipsis_and_keeps_its_whole_text(qtbot):
    tl = _timeline(qtbot, ["short one", LONG], 620)
    box = tl.probe_box
    assert box.itemText(1).endswith("…") and len(box.itemText(1)) == 60
    assert box.itemData(1, Qt.ItemDataRole.ToolTipRole) == LONG
    box.setCurrentIndex(1)
    assert LONG in box.toolTip()
    box.setCurrentIndex(0)
    assert LONG not in box.toolTip() and "short one" in box.toolTip()
