"""The comparison figures (matrices side by side, square cells) re-flow for an export like on screen:
each map's row labels stay left of its matrix at every export size."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection, SelectionState  # noqa: E402


@pytest.mark.parametrize("size", [(1066, 600), (1600, 900), (800, 800)])
def test_row_labels_stay_beside_their_matrix_in_an_export(qtbot, size):
    from attnviz.gui.views.lesson_views import CausalMaskView

    trace = sample_trace("decoder", T=12)
    view = CausalMaskView(selection=Selection(SelectionState(layer=0, head=0)))
    qtbot.addWidget(view)
    view.resize(640, 300)  # a small window: the export re-flows to a much larger figure
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    seen = []
    relayout = view._after_relayout

    def check():
        relayout()
        if view.figure.geometry().width() == size[0]:
            # the last pass is the one drawn (a page with M's "−∞" under its floor is laid out again, M folded)
            seen[:] = [(m.left.geometry().right(), m.vb.geometry().left()) for m in view.maps if m.isVisible()]

    view._after_relayout = check
    image = QImage(*size, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    view.render_figure(painter, QRectF(0, 0, *size))
    painter.end()
    assert len(seen) in (2, 3), seen  # M, S + M, P; or S + M and P
    assert all(axis_right <= vb_left + 0.5 for axis_right, vb_left in seen), seen
