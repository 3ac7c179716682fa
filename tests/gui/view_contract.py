"""The view contract every view keeps on every kind of trace (selection, style, None, export), as a check that
test files call: tests/gui/test_views_contract.py on every view class, test_views_dataset.py on the data-set views."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize, Qt  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgGenerator  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def contract_traces() -> dict:
    """One small trace of each kind (T = 7, with gradients)."""
    return {kind: sample_trace(kind, T=7, grad=True) for kind in ("encoder", "decoder", "encoder-decoder", "vit")}


def svg_texts(view) -> list[str]:
    buf = QBuffer()
    buf.open(QIODevice.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(900, 600))
    gen.setViewBox(QRectF(0, 0, 900, 600))
    painter = QPainter(gen)
    view.render_figure(painter, QRectF(0, 0, 900, 600))
    painter.end()
    return re.findall(r"<text[^>]*>([^<]*)</text>", bytes(buf.data()).decode("utf-8"))


def check_view_contract(qtbot, cls, traces) -> None:
    sel = Selection()
    view = cls(selection=sel, style=PRESETS["default"])
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    for kind, trace in traces.items():
        view.set_trace(trace)
        for changes in ({"layer": 1, "head": 3, "query": 2}, {"part": "cross"}, {"part": "enc"},
                        {"part": "self", "query": None}, {"layer": 5, "head": 9}):  # out of range stays valid
            sel.update(**changes)
        QApplication.processEvents()
    # background work (statistics, pooling) arrives: wait for it, then the figure must be complete
    qtbot.waitUntil(lambda: not view.background_pending, timeout=30000)
    if hasattr(view, "stats"):  # the All heads grid: its statistics are those of the last trace
        assert view.stats is not None and view.stats.entropy.shape[:2] == (trace.n_layers, trace.n_heads)
    view.set_style(PRESETS["presentation"])
    view.set_style(PRESETS["dark"])
    QApplication.processEvents()
    # long titles wrap: every figure fits a dock a third of a 1280-px screen, even in presentation fonts
    assert view.figure.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() <= 400
    texts = svg_texts(view)
    assert texts, f"{cls.__name__} exported no text"
    img = QImage(800, 500, QImage.Format_ARGB32)
    img.fill(0)
    painter = QPainter(img)
    view.render_figure(painter, QRectF(0, 0, 800, 500), scale=1.0)
    painter.end()
    assert len({img.pixel(x, y) for x in range(0, 800, 23) for y in range(0, 500, 19)}) > 3
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()
    assert view.grab().save(f"{SHOTS}/contract_{cls.__name__}_dark.png")
    view.set_trace(None)
    QApplication.processEvents()
