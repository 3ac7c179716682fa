"""A head map is a tokens × tokens map: drawn with square cells (within the layout audit's MAX_MAP_ASPECT) in a
wide window, presented (F5 drew shapes' 17 × 17 map ~1250 × 700 px on a 1920×1080 screen, 1.8 : 1) and in an
export, the map centred in the room rather than stretched across it (issue 36)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection, SelectionState  # noqa: E402
from layout_audit import MAX_MAP_ASPECT  # noqa: E402


def _cell_aspect(view) -> float:
    vb = view.heatmap.vb
    rows, cols = view.heatmap.image.shape_rc
    return (vb.width() / cols) / (vb.height() / rows)


def _wide_view(qtbot, square: bool = True):
    from attnviz.gui.style import ViewStyle
    from attnviz.gui.views.head_map_view import HeadMapView

    view = HeadMapView(selection=Selection(SelectionState(layer=0, head=0)), style=ViewStyle(font_scale=1.6))
    if not square:  # the control: the map as wide as the room
        view.heatmap.max_cell_aspect = None
    qtbot.addWidget(view)
    view.resize(1900, 1000)  # presented full screen on a 1920×1080 screen
    view.show()
    view.set_trace(sample_trace("vit"))  # 17 tokens: [CLS] and a 4×4 grid of patches
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.heatmap.image.shape_rc == (17, 17), timeout=20_000)
    for _ in range(5):
        QApplication.processEvents()
    return view


def test_a_presented_head_map_has_square_cells(qtbot):
    view = _wide_view(qtbot)
    assert 1 / MAX_MAP_ASPECT <= _cell_aspect(view) <= MAX_MAP_ASPECT, _cell_aspect(view)
    vb = view.heatmap.vb.sceneBoundingRect()
    assert vb.height() > 0.6 * view.canvas.height()  # square by its height, not shrunk
    # centred: the room left over is shared either side
    fig = view.figure.geometry()
    box = view.heatmap.geometry()
    assert abs((box.left() - fig.left()) - (fig.right() - box.right())) < 4, (box, fig)


def test_an_exported_head_map_has_square_cells(qtbot):
    view = _wide_view(qtbot)
    seen = []
    after = view._after_relayout

    def check():
        after()
        if round(view.figure.geometry().width()) == 1600:
            seen.append(_cell_aspect(view))

    view._after_relayout = check
    image = QImage(1600, 900, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    view.render_figure(painter, QRectF(0, 0, 1600, 900))
    painter.end()
    assert seen and all(1 / MAX_MAP_ASPECT <= a <= MAX_MAP_ASPECT for a in seen), seen


def test_without_the_limit_the_map_is_stretched(qtbot):
    """Negative control: the same view with the map as wide as the room stretches its cells past the limit."""
    view = _wide_view(qtbot, square=False)
    assert _cell_aspect(view) > MAX_MAP_ASPECT


def test_a_tall_narrow_map_widens_its_columns_to_a_label_line(qtbot):
    """T5's 33 decoder rows × 7 source words at 1280×720: square cells made the columns 8 px wide and every other
    source word lost its label. Columns may widen to a label line (never past a map as wide as tall)."""
    import numpy as np

    from attnviz.gui.style import ViewStyle
    from attnviz.gui.widgets.heatmap import LabelledHeatmap
    import pyqtgraph as pg

    widths = {}
    for shape in ((33, 7), (33, 33)):  # (33, 33): the control, a square map keeps square cells
        rows, cols = shape
        win = pg.GraphicsLayoutWidget()
        qtbot.addWidget(win)
        win.resize(900, 330)
        hm = LabelledHeatmap(ViewStyle(), max_cell_aspect=1.0)
        win.addItem(hm)
        win.show()
        qtbot.waitExposed(win)
        hm.set_image((np.random.default_rng(0).random(shape) * 254).astype(np.uint8), shape)
        for _ in range(5):
            QApplication.processEvents()
        w, h = hm.vb.width() / cols, hm.vb.height() / rows
        widths[shape] = (w, h)
    w, h = widths[(33, 7)]
    assert w >= ViewStyle().metrics().height() - 0.5 and w > 1.5 * h, widths
    w, h = widths[(33, 33)]
    assert abs(w / h - 1) < 0.1, widths
