"""A rejected image (unreadable, wrong shape, empty) is a notice; the picture on screen keeps its caption."""

from __future__ import annotations

import numpy as np
import pytest


def _preview_bytes(win):
    img = win.input_panel.image.preview.pixmap().toImage()
    return bytes(img.constBits())


@pytest.mark.parametrize("bad", ["unreadable file", "five channels", "empty array"])
def test_rejected_image_keeps_the_picture_and_its_caption(bad, make_window, qtbot, tmp_path):
    win = make_window(start=False, model="tiny-vit")
    with qtbot.waitSignal(win.model_loaded, timeout=60000):
        win.start()
    img = np.zeros((40, 40, 3), np.uint8)
    img[10:30, 10:30] = (250, 30, 30)
    panel = win.input_panel.image
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        panel.submit(img, caption="red square")
    trace, before = got.args[0], _preview_bytes(win)
    assert panel.caption.text() == "red square" and panel.current is img and panel.pending is None
    if bad == "unreadable file":
        path = tmp_path / "holiday.png"
        path.write_bytes(b"this is not a png")
        rejected, expected = str(path), "cannot decode image"
    elif bad == "five channels":
        rejected, expected = np.zeros((8, 8, 5), np.uint8), "must be (H, W) or (H, W, C)"
    else:
        rejected, expected = np.zeros((0, 8, 3), np.uint8), "empty"
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        panel.submit(rejected)
    text, level = got.args
    assert expected in text and "Traceback" not in text and level == "warning"
    assert win.notice.isVisible()
    # the picture, its caption, what a saved scene would record and every view: still the red square
    assert panel.caption.text() == "red square" and "holiday" not in panel.caption.text()
    assert panel.current is img and panel.pending is None
    assert _preview_bytes(win) == before
    assert win.trace is trace and all(v.trace is trace for v in win.views_area.views if v.trace is not None)
    # the next good image replaces it, named
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        panel.submit(255 - img, caption="cyan square")
    assert panel.caption.text() == "cyan square" and panel.pending is None
