"""The model list's columns are whole or hidden, never cut (issue 36, finding 10), at a 1920×1080 model list
(~400 px) and a 1280×720 one (~270 px); wide enough, every column shows (the control)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


@pytest.mark.parametrize("width", [270, 400, 1400])
def test_columns_whole_or_hidden(qtbot, tmp_path, width):
    from attnviz.gui.panels.model_catalogue import describe_model_dir
    from attnviz.gui.panels.model_panel import ModelPanel
    from tests.gui.conftest import write_tiny_models

    paths = write_tiny_models(tmp_path)
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.resize(width, 400)
    panel.show()
    panel.set_catalogue([describe_model_dir(p) for p in paths.values()])
    for _ in range(3):
        QApplication.processEvents()
    tree, header = panel.tree, panel.tree.header()
    shown = [c for c in range(tree.columnCount()) if not tree.isColumnHidden(c)]
    assert 0 in shown and 2 in shown  # the name and the held-out score always
    right = max(header.sectionViewportPosition(c) + header.sectionSize(c) for c in shown)
    assert right <= tree.viewport().width(), f"columns end at {right} px of {tree.viewport().width()}"
    if width >= 1400:
        assert shown == [0, 1, 2, 3]  # room for all: nothing hidden


def _bundled_panel(qtbot, monkeypatch, width: int):
    """A shown model panel ``width`` px wide listing the real bundled models (skipped when they are not built)."""
    from pathlib import Path

    from attnviz.gui.panels.model_catalogue import scan_bundled
    from attnviz.gui.panels.model_panel import ModelPanel

    assets = Path(__file__).resolve().parents[2] / "assets"
    if not (assets / "models" / "masked-lm" / "config.json").exists():
        pytest.skip("the bundled models are not built (make assets)")
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(assets))
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.resize(width, 400)
    panel.show()
    panel.set_catalogue(scan_bundled())
    return panel


@pytest.mark.parametrize("width", [270, 400])
def test_bundled_models_held_out_column_is_whole(qtbot, monkeypatch, width):
    """The bundled models' real metrics ("hidden word guessed right (top-1 at [MASK]) …") at a 1280×720 list
    (~270 px) and a 1920×1080 one: the held-out column fits (its score alone when the words do not); the
    control: the words are cut at these widths (what the list showed before)."""
    panel = _bundled_panel(qtbot, monkeypatch, width)
    for _ in range(3):
        QApplication.processEvents()
    tree, header = panel.tree, panel.tree.header()
    words = max(tree.fontMetrics().horizontalAdvance(tree.topLevelItem(i).data(2, Qt.ItemDataRole.UserRole + 1))
                for i in range(tree.topLevelItemCount()))
    assert header.sectionSize(0) + words > tree.viewport().width()  # control: the words would be cut
    for i in range(tree.topLevelItemCount()):
        text = tree.topLevelItem(i).text(2)
        assert tree.fontMetrics().horizontalAdvance(text) <= header.sectionSize(2), f"{text!r} cut"
    right = header.sectionViewportPosition(2) + header.sectionSize(2)
    assert right <= tree.viewport().width(), f"the held-out column ends at {right} px of {tree.viewport().width()}"


def test_wider_list_never_shows_fewer_columns(qtbot, monkeypatch):
    """Issue 36: a 1920×1080 list kept the held-out words and hid Params, which the narrower 1280×720 list
    (score form) showed. Swept over widths, the shown columns only grow (a column before the metric's
    words); the control: the words do take more room than the score, so the list had a real choice."""
    panel = _bundled_panel(qtbot, monkeypatch, 300)
    tree, header = panel.tree, panel.tree.header()
    seen, forms = [], set()
    for width in range(300, 1000, 10):
        panel.resize(width, 400)
        for _ in range(3):
            QApplication.processEvents()
        shown = [c for c in range(tree.columnCount()) if not tree.isColumnHidden(c)]
        seen.append((width, shown))
        forms.add(tree.topLevelItem(0).text(2))
        right = max(header.sectionViewportPosition(c) + header.sectionSize(c) for c in shown)
        assert right <= tree.viewport().width(), f"at {width} px the columns end at {right} px"
    assert len(forms) == 2, forms  # control: both the score and the words were shown somewhere in the sweep
    for (w0, a), (w1, b) in zip(seen, seen[1:]):
        assert set(a) <= set(b), f"{w0} px shows {a}, the wider {w1} px only {b}"
    assert seen[-1][1] == [0, 1, 2, 3]
