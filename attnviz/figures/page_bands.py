"""A figure page's title and caption bands: the title on top (shrunk to the width), the measured caption below
(wrapped, shrunk to its band down to a floor), both with real subscripts for indices ("W_O", "√d_k").
Split from :mod:`attnviz.figures.render`, which places the figure between them (``opts``: its ExportOptions, named
in annotations only: importing render here would make the two modules a cycle)."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter

__all__ = ["band_height", "paint_title", "paint_caption", "caption_layout", "CAPTION_MIN_PX", "CAPTION_SIDE"]


def band_height(text: str, opts: "ExportOptions", rel: float) -> int:
    return int(round(opts.height * rel * opts.font_scale)) if text else 0


def paint_title(painter: QPainter, opts: "ExportOptions") -> QFont:
    """The page's background and title band; the font the caption starts from."""
    w = opts.width
    if not opts.transparent:
        painter.fillRect(QRectF(0, 0, w, opts.height), QColor("white"))
    top = band_height(opts.title, opts, 0.07)
    font = QFont(painter.font())
    if top:
        font.setPixelSize(max(8, int(top * 0.6)))
        font.setBold(True)
        # a long title shrinks to fit the width rather than being cut at the edges
        while font.pixelSize() > 8 and QFontMetricsF(font).horizontalAdvance(opts.title) > w * 0.96:
            font.setPixelSize(font.pixelSize() - 1)
        painter.setFont(font)
        painter.setPen(QColor("black"))
        if not _draw_formula_title(painter, opts.title, font, QRectF(0, 0, w, top)):
            painter.drawText(QRectF(0, 0, w, top), Qt.AlignCenter, opts.title)
    return font


def _draw_formula_title(painter: QPainter, title: str, font: QFont, rect: QRectF) -> bool:
    """A title with indices ("concat · W_O", "Why divide by √d_k") drawn with real subscripts, as the figures
    write them (the deck's pages printed the underscore); False (nothing drawn) for a title without any."""
    from PySide6.QtGui import QTextDocument

    from attnviz.gui.widgets.formula_text import formula_html, has_subscripts

    if not has_subscripts(title):
        return False
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setHtml(formula_html(title))
    while font.pixelSize() > 8 and doc.idealWidth() > rect.width() * 0.96:  # as the plain title: fit the width
        font.setPixelSize(font.pixelSize() - 1)
        doc.setDefaultFont(font)
    size = doc.size()
    painter.save()
    painter.translate(rect.left() + (rect.width() - doc.idealWidth()) / 2, rect.top() + (rect.height() - size.height()) / 2)
    doc.drawContents(painter)
    painter.restore()
    return True


CAPTION_MIN_PX = 12  # a caption shrinks to fit its band, never below this (then it is cut, as before)
CAPTION_SIDE = 0.02  # the caption's margin at each side, a share of the page's width


def caption_layout(opts: "ExportOptions", font: QFont) -> tuple[QRectF, QFont]:
    """The caption band and the font its text fits in: one line at 55 % of the band, smaller until the wrapped
    lines fit (a two-line measured caption at the band's one-line size was cut at its top and bottom)."""
    w, h = opts.width, opts.height
    bottom = band_height(opts.caption, opts, 0.05)
    # a margin at each side (the deck's two-line captions ran from one edge of the page to the other)
    rect = QRectF(w * CAPTION_SIDE, h - bottom, w * (1 - 2 * CAPTION_SIDE), bottom)
    font = QFont(font)
    font.setBold(False)
    font.setPixelSize(max(8, int(bottom * 0.55)))
    flags = int(Qt.AlignCenter | Qt.TextWordWrap)
    while (font.pixelSize() > CAPTION_MIN_PX
           and QFontMetricsF(font).boundingRect(rect, flags, opts.caption).height() > bottom):
        font.setPixelSize(font.pixelSize() - 1)
    return rect, font


def _draw_formula_caption(painter: QPainter, caption: str, font: QFont, rect: QRectF) -> bool:
    """A caption with indices ("concat(Z)·W_O") wrapped and centred in ``rect`` with real subscripts, as the
    title (the deck printed "W_O" with its underscore); False (nothing drawn) for a caption without any."""
    from PySide6.QtGui import QTextDocument, QTextOption

    from attnviz.gui.widgets.formula_text import formula_html, has_subscripts

    if not has_subscripts(caption):
        return False
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    option = QTextOption(Qt.AlignHCenter)
    option.setWrapMode(QTextOption.WrapMode.WordWrap)
    doc.setDefaultTextOption(option)
    doc.setDefaultStyleSheet("body { color: #3c3c3c; }")
    doc.setHtml(f"<body>{formula_html(caption)}</body>")
    doc.setTextWidth(rect.width())
    painter.save()
    painter.translate(rect.left(), rect.top() + max(0.0, (rect.height() - doc.size().height()) / 2))
    doc.drawContents(painter)
    painter.restore()
    return True


def paint_caption(painter: QPainter, opts: "ExportOptions", font: QFont) -> None:
    if band_height(opts.caption, opts, 0.05):
        rect, font = caption_layout(opts, font)
        painter.setFont(font)
        painter.setPen(QColor(60, 60, 60))
        if not _draw_formula_caption(painter, opts.caption, font, rect):
            painter.drawText(rect, Qt.AlignCenter | Qt.TextWordWrap, opts.caption)
