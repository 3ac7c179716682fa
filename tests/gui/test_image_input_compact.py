"""A compact window (1280×720) keeps the image input small (issue 36 item 3: its 168 px preview made the input
dock 192 px tall, the shapes head map ~200 px tall with 4 of 17 rows named); full size at a larger window."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402


def test_the_preview_shrinks_in_a_compact_window_and_grows_back(qtbot):
    from attnviz.gui.panels.input_panel import InputPanel
    from attnviz.gui.panels.image_input import COMPACT_PREVIEW, PREVIEW

    panel = InputPanel()
    qtbot.addWidget(panel)
    panel.set_mode("image")
    panel.image.set_preview(np.random.default_rng(0).random((32, 32, 3)))
    full = panel.image.sizeHint().height()
    panel.set_compact(True)
    assert panel.image.preview.width() == COMPACT_PREVIEW < PREVIEW
    assert panel.image.preview.pixmap().width() <= COMPACT_PREVIEW  # the image drawn at the new size
    assert panel.image.sizeHint().height() < full - 60
    panel.set_compact(False)
    assert panel.image.preview.width() == PREVIEW and panel.image.preview.pixmap().width() > COMPACT_PREVIEW


def test_no_image_text_is_whole_in_either_preview(qtbot):
    """Issue 36: before any image, the compact 36 px preview read "o imag" ("no image" cut at both ends). The
    text drawn fits the box, compact and full; the control: "no image" on one line does not fit 36 px."""
    from PySide6.QtCore import Qt

    from attnviz.gui.panels.input_panel import InputPanel

    panel = InputPanel()
    qtbot.addWidget(panel)
    panel.set_mode("image")
    preview = panel.image.preview
    for compact in (True, False, True):
        panel.set_compact(compact)
        box = preview.contentsRect()
        need = preview.fontMetrics().boundingRect(box, int(Qt.AlignmentFlag.AlignCenter), preview.text())
        assert "no" in preview.text() or preview.text() == "none"
        assert need.width() <= box.width() and need.height() <= box.height(), (compact, preview.text(), need, box)
    assert preview.fontMetrics().horizontalAdvance("no image") > preview.contentsRect().width()  # the control
    panel.image.set_preview(np.zeros((8, 8, 3)))
    panel.set_compact(False)
    assert preview.pixmap() is not None and not preview.pixmap().isNull()  # the image stays through the refit
