"""A page painted part by part (a few parts per event-loop turn) gives the same figure as one render."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage, QPainter, QRegion
from PySide6.QtWidgets import QGroupBox, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from attnviz.figures.render import ExportOptions, fit_widget, payload_steps, render_payload
from attnviz.gui.widget_parts import part_steps, widget_parts


def _page(qtbot) -> QWidget:
    """A page shaped like the Training tab: a splitter of group boxes, a plot and plain widgets."""
    page = QWidget()
    qtbot.addWidget(page)
    split = QSplitter(page)
    form = QGroupBox("Train a model", split)
    QVBoxLayout(form).addWidget(QLabel("Steps: 800\nLearning rate: 0.001", form))
    form.layout().addWidget(QPushButton("Start training", form))
    right = QSplitter(Qt.Orientation.Vertical, split)
    curves = QGroupBox("Training curves", right)
    plot = pg.PlotWidget(curves)
    plot.plot(np.arange(50.0), np.exp(-np.arange(50.0) / 10), pen=pg.mkPen("#CC6677", width=2))
    QVBoxLayout(curves).addWidget(plot)
    QVBoxLayout(QGroupBox("How attention emerged", right)).addWidget(QLabel("step 800 (20/20)"))
    QVBoxLayout(page).addWidget(split)
    page.resize(960, 540)
    page.show()
    qtbot.waitExposed(page)
    return page


def _whole(page: QWidget) -> QImage:
    img = QImage(page.size(), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.white)
    painter = QPainter(img)
    QWidget.render(page, painter, QPoint(0, 0), QRegion(), QWidget.RenderFlag.DrawChildren)
    painter.end()
    return img


def test_parts_paint_the_same_pixels_as_one_render(qtbot):
    page = _page(qtbot)
    parts = list(widget_parts(page))
    assert len(parts) > 3  # the splitters and group boxes were opened up
    assert parts[0][0] is page
    img = QImage(page.size(), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.white)
    painter = QPainter(img)
    turns = sum(1 for _ in part_steps(painter, page, budget_s=0.0))  # a turn after every part
    painter.end()
    assert turns == len(parts) - 1
    assert img == _whole(page)


def test_stepped_payload_equals_the_one_shot_payload(qtbot):
    page = _page(qtbot)
    opts = ExportOptions(width=960, height=640, title="Training", caption="loss per step")
    assert fit_widget(page, opts) is not None  # the app's export holds the page at the figure's size first
    qtbot.wait(20)
    page.setUpdatesEnabled(True)
    for fmt in ("png", "svg", "pdf"):
        steps = payload_steps(page, fmt, opts)
        try:
            while True:
                next(steps)
        except StopIteration as done:
            stepped = done.value
        one_shot = render_payload(page, fmt, opts)
        if fmt == "png":
            assert stepped == one_shot
        else:
            assert stepped[:5] == one_shot[:5] and abs(len(stepped) - len(one_shot)) < 64



def _app_export(qtbot, page, path, opts):
    from attnviz.gui.figure_export import FigureExport

    page.resize(700, 400)  # on screen at another size: the export resizes it, then puts it back
    qtbot.wait(20)
    runner = FigureExport()
    with qtbot.waitSignal(runner.done, timeout=30000) as got:
        runner.export(page, None, None, path, opts, None)
    assert got.args[0] == path and page.size().width() == 700
    return QImage(str(path))


def test_the_apps_stepped_export_of_a_page_writes_what_one_paint_wrote(qtbot, tmp_path, monkeypatch):
    """FigureExport paints a plain page in parts across event-loop turns; the file is the same as
    when it was painted in one go (the export before this change)."""
    import attnviz.gui.figure_export as figure_export

    page = _page(qtbot)
    opts = ExportOptions(width=960, height=600)
    with monkeypatch.context() as patch:
        def one_paint(fig, fmt, opts):
            return render_payload(fig, fmt, opts)
            yield  # a generator that never yields

        patch.setattr(figure_export, "payload_steps", one_paint)
        want = _app_export(qtbot, page, tmp_path / "one.png", opts)
    assert _app_export(qtbot, page, tmp_path / "parts.png", opts) == want
