"""A page of the window (held by its tab's layout) is exported at the figure's size, in parts, and put back."""

from __future__ import annotations

import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QGraphicsView, QGroupBox, QLabel, QPushButton, QSplitter, QTabWidget, QVBoxLayout, QWidget

from attnviz.figures.render import ExportOptions


class _Reflowing(QLabel):
    """A label that asks its layouts for a new geometry whenever it is resized, as the Training page's
    widgets do: the tab's layout then places the page again (at its screen size)."""

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self.updateGeometry()


def _page(parent=None) -> QWidget:
    """A page shaped like the Training tab."""
    page = QWidget(parent)
    split = QSplitter(page)
    form = QGroupBox("Train a model", split)
    note = QLabel("Which noun does it refer to? The adjective decides which one the model attends to. " * 3, form)
    note.setWordWrap(True)
    QVBoxLayout(form).addWidget(note)
    form.layout().addWidget(QPushButton("Start training", form))
    right = QSplitter(Qt.Orientation.Vertical, split)
    curves = QGroupBox("Training curves", right)
    plot = pg.PlotWidget(curves)
    plot.plot(np.arange(50.0), np.exp(-np.arange(50.0) / 10), pen=pg.mkPen("#CC6677", width=2))
    QVBoxLayout(curves).addWidget(plot)
    QVBoxLayout(QGroupBox("How attention emerged", right)).addWidget(QLabel("step 800 (20/20)"))
    QVBoxLayout(page).addWidget(split)
    page.layout().addWidget(_Reflowing("curves recorded when the model was trained (800 steps)", page))
    return page


def test_a_tab_page_is_exported_at_the_figure_size_and_put_back(qtbot, tmp_path):
    from attnviz.gui.figure_export import FigureExport

    opts = ExportOptions(width=960, height=600)
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    page = _page()
    tabs.addTab(QLabel("another tab"), "views")
    tabs.addTab(page, "training")
    tabs.setCurrentWidget(page)
    tabs.resize(700, 420)
    tabs.show()
    qtbot.waitExposed(tabs)
    qtbot.wait(20)
    on_screen = page.size()
    assert on_screen.width() < opts.width  # the export has to enlarge it

    runner = FigureExport()
    sizes = []  # the page's size at every event-loop turn of the export
    runner._timer.timeout.connect(lambda: sizes.append(page.size().toTuple()))
    with qtbot.waitSignal(runner.done, timeout=30000):
        runner.export(page, None, None, tmp_path / "page.png", opts, None)
    img = QImage(str(tmp_path / "page.png")).convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.width(), 4)[..., :3]
    drawn = (pixels != 255).any(-1)  # the figure's background is white where no widget paints
    # laid out at 960×600, not drawn at its screen size in the slide's top-left corner
    assert drawn[:, on_screen.width() + 10:].any() and drawn[on_screen.height() + 10:, :].any()
    assert (opts.width, opts.height) in sizes  # held at the figure's size between turns
    # back on screen: its size, its tab's layout in charge again, updates on
    assert page.size() == on_screen and page.updatesEnabled()
    tabs.resize(760, 460)
    qtbot.wait(20)
    assert page.size() != on_screen  # the tab's layout places it again


def test_a_large_plot_is_painted_in_a_turn_of_its_own(qtbot):
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter, QRegion

    from attnviz.gui.widget_parts import HEAVY_FRACTION, part_steps, widget_parts

    page = _page()
    qtbot.addWidget(page)
    page.resize(960, 600)
    page.show()
    qtbot.waitExposed(page)
    page.findChild(QSplitter).setSizes([300, 660])  # the curves get most of the width, as in the app
    qtbot.wait(20)
    plots = [p for p, _, _ in widget_parts(page) if isinstance(p, pg.PlotWidget)]
    assert plots and plots[0].width() * plots[0].height() >= 960 * 600 * HEAVY_FRACTION
    img = QImage(page.size(), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.white)
    painter = QPainter(img)
    turns = sum(1 for _ in part_steps(painter, page, budget_s=1e9))  # no time limit: only the plot ends one
    painter.end()
    assert turns == len(plots) == 1
    whole = QImage(page.size(), QImage.Format.Format_ARGB32_Premultiplied)
    whole.fill(Qt.GlobalColor.white)
    painter = QPainter(whole)
    QWidget.render(page, painter, QPoint(0, 0), QRegion(), QWidget.RenderFlag.DrawChildren)
    painter.end()
    assert img == whole  # the same pixels as one render


def test_plots_in_an_svg_draw_their_background_not_a_bitmap_of_it(qtbot, monkeypatch):
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgRenderer

    from attnviz.figures.render import render_payload

    page = _page()
    qtbot.addWidget(page)
    page.resize(960, 600)
    page.show()
    qtbot.waitExposed(page)
    plot = page.findChild(pg.PlotWidget)
    mode = plot.cacheMode()
    assert mode & QGraphicsView.CacheModeFlag.CacheBackground  # pyqtgraph caches it on screen
    opts = ExportOptions(width=960, height=600)
    svg = render_payload(page, "svg", opts)
    assert plot.cacheMode() == mode  # put back once painted
    # the plot's background was a plot-sized PNG embedded in the file; now only the images the style
    # draws the group boxes' frames with are left
    sizes = [tuple(map(float, m)) for m in
             re.findall(rb'<image[^>]*?width="([\d.]+)"[^>]*?height="([\d.]+)"', svg)]
    assert sizes and (float(plot.width()), float(plot.height())) not in sizes
    # and it looks the same as when the plot's background went in as a bitmap
    import contextlib

    import attnviz.figures.render as figure_render

    with monkeypatch.context() as patch:
        patch.setattr(figure_render, "vector_backgrounds", lambda *_: contextlib.nullcontext())
        bitmap_svg = render_payload(page, "svg", opts)
    assert (float(plot.width()), float(plot.height())) in [
        tuple(map(float, m)) for m in re.findall(rb'<image[^>]*?width="([\d.]+)"[^>]*?height="([\d.]+)"', bitmap_svg)]

    def drawn(data: bytes) -> QImage:
        img = QImage(960, 600, QImage.Format.Format_ARGB32)
        img.fill(Qt.GlobalColor.white)
        painter = QPainter(img)
        QSvgRenderer(data).render(painter)
        painter.end()
        return img

    assert drawn(svg) == drawn(bitmap_svg)
