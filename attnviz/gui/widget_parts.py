"""Paint a large widget (a page of the window) in parts, a few per event-loop turn: :func:`part_steps`.

``QWidget.render`` of the whole Training page at slide size took 0.2–0.4 s in one go, the window
frozen (issue 18). The same drawing, split: a container (splitter, group box, plain widget) is painted
without its children, then each child at its place, in stacking order — the order ``QWidget.render``
itself paints them in. Scroll areas, graphics views and small widgets are painted whole (they clip
their own contents). The caller gets control back whenever a turn's budget is spent.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter, QRegion
from PySide6.QtWidgets import QAbstractScrollArea, QGraphicsView, QWidget

__all__ = ["part_steps", "widget_parts", "TURN_BUDGET_S"]

TURN_BUDGET_S = 0.02  # paint for about this long, then let the event loop run (its goal: no gap > 100 ms)
SMALL_FRACTION = 1 / 24  # a widget smaller than this share of the page is painted whole: not worth a turn
# a graphics view at least this share of the page, painted whole, gets a turn of its own: one such plot is
# 40-80 ms in an SVG (the view's cached background goes in as a page-sized PNG image), on top of the
# turn's budget it exceeded 100 ms (issue 18)
HEAVY_FRACTION = 1 / 8

_ALONE = QWidget.RenderFlag(0)
_WHOLE = QWidget.RenderFlag.DrawChildren


def _children(widget: QWidget) -> list[QWidget]:
    """The visible child widgets in stacking order (bottom first), as Qt paints them."""
    return [c for c in widget.children() if isinstance(c, QWidget) and not c.isWindow() and c.isVisible()]


def _splittable(widget: QWidget, page_area: int) -> bool:
    """Paint this one alone and its children apart? Only plain containers whose children lie inside
    them (no clipping needed), and only when it is big enough to matter."""
    if isinstance(widget, QAbstractScrollArea) or widget.width() * widget.height() < page_area * SMALL_FRACTION:
        return False
    kids = _children(widget)
    return bool(kids) and all(widget.rect().contains(c.geometry()) for c in kids)


def widget_parts(widget: QWidget):
    """``(part, offset in widget, flags)`` in painting order.

    No window background, as the whole-widget render had it: where no widget paints, the figure's
    own background (white, or transparent) shows.
    """
    area = max(1, widget.width() * widget.height())

    def walk(w: QWidget, offset: QPoint):
        if not _splittable(w, area):
            yield w, offset, _WHOLE
            return
        yield w, offset, _ALONE
        for child in _children(w):
            yield from walk(child, offset + child.pos())

    yield from walk(widget, QPoint(0, 0))


def _heavy(part: QWidget, flags, heavy_area: float) -> bool:
    """A large graphics view painted whole: it starts a turn of its own."""
    return flags == _WHOLE and isinstance(part, QGraphicsView) and part.width() * part.height() >= heavy_area


def part_steps(painter: QPainter, widget: QWidget, budget_s: float = TURN_BUDGET_S):
    """Paint ``widget`` at the painter's origin, yielding each time ``budget_s`` of painting is spent
    and before each large graphics view (a plot: see ``HEAVY_FRACTION``).

    The widget must not change between steps (the caller holds it at the figure's size).
    """
    start = time.perf_counter()
    heavy_area = widget.width() * widget.height() * HEAVY_FRACTION
    painted = 0  # parts painted in this turn
    for part, offset, flags in widget_parts(widget):
        if painted and (time.perf_counter() - start > budget_s or _heavy(part, flags, heavy_area)):
            yield
            start, painted = time.perf_counter(), 0
        painted += 1
        # QWidget.render, not QGraphicsView.render (pyqtgraph views override it with another signature)
        QWidget.render(part, painter, offset, QRegion(), flags)
