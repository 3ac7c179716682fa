"""Paint a large widget (a page of the window) in parts, a few per event-loop turn: :func:`part_steps`.

``QWidget.render`` of the whole Training page at slide size took 0.2–0.4 s in one go, the window
frozen (issue 18). The same drawing, split: a container (splitter, group box, plain widget) is painted
without its children, then each child at its place, in stacking order — the order ``QWidget.render``
itself paints them in. Scroll areas, graphics views and small widgets are painted whole (they clip
their own contents). The caller gets control back whenever a turn's budget is spent.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPaintEngine, QPainter, QRegion
from PySide6.QtWidgets import QAbstractScrollArea, QGraphicsView, QWidget

__all__ = ["part_steps", "widget_parts", "vector_backgrounds", "TURN_BUDGET_S"]

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


_VECTOR_ENGINES = (QPaintEngine.Type.SVG, QPaintEngine.Type.Pdf)


@contextmanager
def vector_backgrounds(widget: QWidget, painter: QPainter):
    """While painting ``widget`` into an SVG or PDF, its graphics views (plots) draw their background
    itself rather than their cached copy of it.

    The cache is a pixmap the size of the plot: a vector painter embeds it as a PNG image, encoded
    there and then (the replay's head map on the Training page: 70-95 ms of one event-loop turn, and
    a bitmap where a filled rectangle is meant). PNG targets keep the cache (same pixels either way).
    """
    engine = painter.paintEngine()
    if engine is None or engine.type() not in _VECTOR_ENGINES:
        yield
        return
    cached = QGraphicsView.CacheModeFlag.CacheBackground
    views = [v for v in [widget, *widget.findChildren(QGraphicsView)]
             if isinstance(v, QGraphicsView) and v.cacheMode() & cached]
    modes = [v.cacheMode() for v in views]
    for view, mode in zip(views, modes):
        view.setCacheMode(mode & ~cached)
    try:
        yield
    finally:
        for view, mode in zip(views, modes):
            view.setCacheMode(mode)


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
    with vector_backgrounds(widget, painter):
        for part, offset, flags in widget_parts(widget):
            if painted and (time.perf_counter() - start > budget_s or _heavy(part, flags, heavy_area)):
                yield
                start, painted = time.perf_counter(), 0
            painted += 1
            # QWidget.render, not QGraphicsView.render (pyqtgraph views override it with another signature)
            QWidget.render(part, painter, offset, QRegion(), flags)
