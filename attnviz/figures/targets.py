"""The three kinds of figure file a painter draws into: a QImage (PNG), a QSvgGenerator (SVG), a QPdfWriter (PDF).

Split from :mod:`attnviz.figures.render`, which paints the figure; each target here is opened at the
figure's logical size (``opts``: an :class:`~attnviz.figures.render.ExportOptions`) and its ``finish``
ends the painter and returns what the file will hold.
"""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication

from attnviz.errors import AttnvizError

__all__ = ["open_target", "screen_dpi"]


def open_target(fmt: str, opts):
    """A painter on a new ``fmt`` target (logical size width × height) and the function that ends it
    and returns the payload (QImage or bytes)."""
    if fmt == "png":
        return _image_target(opts)
    if fmt == "svg":
        return _svg_target(opts)
    if fmt == "pdf":
        return _pdf_target(opts)
    raise AttnvizError(f"unknown figure format {fmt!r}: use png, svg or pdf")


def _image_target(opts):
    img = QImage(int(opts.width * opts.scale), int(opts.height * opts.scale), QImage.Format_ARGB32_Premultiplied)
    img.fill(Qt.transparent)
    # painted at the screen's DPI, where the views measured their labels; the file's dpi is set after
    _set_dpi(img, screen_dpi())
    painter = QPainter(img)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    painter.scale(opts.scale, opts.scale)

    def finish() -> QImage:
        painter.end()
        _set_dpi(img, opts.dpi)  # metadata only: the pixels do not depend on it
        return img
    return painter, finish


def screen_dpi() -> float:
    """The logical DPI fonts were measured at when the views laid out their labels.

    Painting onto a device of another DPI converts point sizes differently: labels came out 1.56×
    wider than their measured boxes at 150 dpi and were cut off ("anima", "becau").
    """
    screen = QApplication.primaryScreen()
    return float(screen.logicalDotsPerInch()) if screen is not None else 96.0


def _set_dpi(img: QImage, dpi: float) -> None:
    dots_per_m = int(round(dpi / 0.0254))
    img.setDotsPerMeterX(dots_per_m)
    img.setDotsPerMeterY(dots_per_m)


def _svg_target(opts):
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(opts.width, opts.height))
    gen.setViewBox(QRectF(0, 0, opts.width, opts.height))
    gen.setResolution(round(screen_dpi()))  # fonts convert as on screen (see screen_dpi)
    gen.setTitle(opts.title or "attnviz figure")
    gen.setDescription(opts.caption or "exported by attnviz")
    painter = QPainter()
    if not painter.begin(gen):
        raise AttnvizError("could not start the SVG writer")

    def finish() -> bytes:
        nonlocal gen  # the generator lives as long as the painter that paints on it
        painter.end()
        gen = None
        return bytes(buf.data())
    return painter, finish


def _pdf_target(opts):
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    dpi = screen_dpi()  # fonts convert as on screen (see screen_dpi); the page keeps opts.dpi's size
    writer.setResolution(round(dpi))
    size_pt = QSizeF(opts.width * 72.0 / opts.dpi, opts.height * 72.0 / opts.dpi)
    writer.setPageLayout(QPageLayout(QPageSize(size_pt, QPageSize.Point), QPageLayout.Portrait, QMarginsF(0, 0, 0, 0)))
    writer.setTitle(opts.title or "attnviz figure")
    writer.setCreator("attnviz")
    painter = QPainter()
    if not painter.begin(writer):
        raise AttnvizError("could not start the PDF writer")
    # heatmaps are small images drawn large: Qt would JPEG them, tinting each cell with its neighbours
    painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
    # the page is width × height pixels at opts.dpi: draw in those logical units, scaled to the device
    painter.scale(round(dpi) / opts.dpi, round(dpi) / opts.dpi)

    def finish() -> bytes:
        nonlocal writer
        painter.end()
        writer = None  # the writer flushes the document's end into the buffer when it goes
        return bytes(buf.data())
    return painter, finish
