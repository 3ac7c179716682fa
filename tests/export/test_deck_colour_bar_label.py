"""A colour bar's label stays beside its own ticks when the layout gives the bar more width than it needs (deck page 12,
the word-order slide: the left bar's "attention weight" was drawn at the bar's far edge, next to the other panel's
map). Painted into an image: no ink beyond the bar's natural width; the control is the label drawn at all."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402


def _ink_columns(qapp, width: float) -> tuple[np.ndarray, int]:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QGraphicsScene

    from attnviz.gui.widgets.colour_bar import ColourBarItem

    bar = ColourBarItem(label="attention weight · one scale for both panels")
    bar.set_levels(0.0, 0.284)
    scene = QGraphicsScene()
    scene.addItem(bar)
    natural = bar.width_at(300)
    bar.setGeometry(QRectF(0, 0, width if width else natural, 300))
    img = QImage(int(bar.size().width()), 300, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    bar.paint(p)
    p.end()
    rgb = np.frombuffer(img.constBits(), np.uint8).reshape(300, img.bytesPerLine() // 4, 4)[:, : img.width(), :3]
    return np.flatnonzero((rgb.min(axis=2) < 128).any(axis=0)), natural


def test_label_stays_beside_its_ticks_in_a_wide_bar(qapp):
    ink, natural = _ink_columns(qapp, 400)
    assert ink.max() <= natural + 2, (ink.max(), natural)


def test_label_is_drawn(qapp):
    ink, natural = _ink_columns(qapp, 0)  # control: at its natural width the label's lines reach the right side
    assert ink.max() >= natural - 8, (ink.max(), natural)
