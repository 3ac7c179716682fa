"""The figure part of the walkthrough widgets: rows of grids and formulas, drawable into any QPainter.

Each widget keeps its controls apart from ``figure_widget`` (a :class:`FigureBoard`), so an export
shows the figure — grids, formulas, labels — without buttons and sliders. ``render_figure`` keeps the
contract of :mod:`attnviz.gui.views.base`: lay the figure out at ``rect.size() / scale`` and draw it
scaled into ``rect``; child widgets paint with ``drawText``, so SVG and PDF keep every number as text.
"""

from __future__ import annotations

from contextlib import contextmanager

from PySide6.QtCore import QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QRegion, QResizeEvent
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from attnviz.gui.style import ViewStyle
from attnviz.gui.widgets.legible import SLIDE_SCALE, exporting

__all__ = ["FigureBoard", "FigureHostMixin", "FigureWidget", "group_rows", "page_layout", "style_label"]


def style_label(label: QLabel, style: ViewStyle, factor: float = 1.0, bold: bool = False) -> QLabel:
    """Give a label the view's font size and colours (so presentation mode enlarges it too)."""
    label.setFont(style.font(factor, bold))
    pal = label.palette()
    pal.setColor(QPalette.WindowText, QColor(style.foreground))
    label.setPalette(pal)
    return label


class _Label(QLabel):
    """A label that wraps without asking for height-for-width layout, which would make a scroll area
    give the whole figure its preferred height instead of fitting it to the window."""

    def hasHeightForWidth(self) -> bool:
        return False

    def sizeHint(self) -> QSize:
        # a wrapped label's own hint assumes a narrow column (four lines where one fits): the board
        # sets the height its lines need at the board's width (FigureBoard.resizeEvent)
        hint = super().sizeHint()
        if self.wordWrap() and self.minimumHeight() > 0:
            return QSize(hint.width(), self.minimumHeight())
        return hint

    def minimumSizeHint(self) -> QSize:
        # the layout grows the hint to this; QLabel's own wraps at a narrow column (a 2-line note as 5)
        hint = super().minimumSizeHint()
        if self.wordWrap() and self.minimumHeight() > 0:
            return QSize(hint.width(), self.minimumHeight())
        return hint


class FigureWidget(QWidget):
    """The exportable part of a widget. It fits the space it is given (grids become heatmaps, numbers
    stay on hover) instead of asking a scroll area for the height its wrapped notes would like."""

    def __init__(self, style: ViewStyle, parent=None):
        super().__init__(parent)
        self.setAutoFillBackground(True)
        self.set_style(style)

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        pal = self.palette()
        pal.setColor(QPalette.Window, QColor(style.background))
        self.setPalette(pal)

    def hasHeightForWidth(self) -> bool:
        return False


class FigureBoard(QWidget):
    """A vertical stack of rows; each row is grids and operator/formula labels side by side."""

    def __init__(self, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.style = style or ViewStyle()
        self.setAutoFillBackground(True)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(14, 10, 14, 10)
        self._layout.setSpacing(10)
        self.items: list[QWidget] = []
        self.context = ""  # prefixed to the line under every heading
        self.set_style(self.style)

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        pal = self.palette()
        pal.setColor(QPalette.Window, QColor(style.background))
        self.setPalette(pal)

    def resizeEvent(self, event) -> None:
        self._fit_notes(event.size().width())
        super().resizeEvent(event)

    def _fit_notes(self, board_width: int) -> None:
        # wrapped notes do not ask for height-for-width (see _Label): give them their lines' height here
        width = max(1, board_width - self._layout.contentsMargins().left() - self._layout.contentsMargins().right())
        changed = False
        for w in self.items:
            if isinstance(w, QLabel) and w.wordWrap():
                h = _wrapped_height(w, width)
                changed |= h != w.minimumHeight()
                w.setMinimumHeight(h)
                w.updateGeometry()  # the layout caches the label's hint (its minimum height)
        if changed:  # the rows below move up now, not at some later layout request
            self._layout.invalidate()

    def clear(self) -> None:
        """Remove every row (the widgets are deleted)."""
        while self._layout.count():
            item = self._layout.takeAt(0)
            w = item.widget()
            if w is not None:
                # hidden and left with its parent until deleted: a parentless widget can come back as a window of
                # its own at the screen's corner while its deletion waits (seen where no event loop had started)
                w.hide()
                w.deleteLater()
            elif item.layout() is not None:
                _drop_layout(item.layout())
        self.items = []

    def label(self, text: str, factor: float = 1.3, bold: bool = False, wrap: bool = False) -> QLabel:
        from attnviz.gui.widgets.formula_text import formula_html, has_subscripts

        rich = has_subscripts(text)  # q_i, W_Q, √d_k with real subscripts on a slide
        lab = style_label(_Label(formula_html(text) if rich else text), self.style, factor, bold)
        lab.setTextFormat(Qt.RichText if rich else Qt.PlainText)
        lab.plain_text = text  # the notation as typed (tests, copy)
        lab.setWordWrap(wrap)
        lab.setAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        # a long line is cut at the figure's edge rather than widening the figure past the window
        lab.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        return lab

    def add_heading(self, text: str, detail: str = "") -> QLabel:
        """The step's formula in large type, an optional explanation under it."""
        # wrapped, not cut: "Layer 26 · head 9 (reads key/value head 2): Z = softmax(Q Kᵀ × 0.25 + M) V" lost
        # its end in a docked window; a heading that fits keeps its one line
        head = self.label(text, 1.7, bold=True, wrap=True)
        head.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self._layout.addWidget(head)
        self.items.append(head)
        self._fit_height(head)
        detail = " · ".join(x for x in (self.context, detail) if x)
        if detail:
            self.add_note(detail, 1.2)
        return head

    def add_note(self, text: str, factor: float = 1.2) -> QLabel:
        note = self.label(text, factor, wrap=True)
        note.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)  # its lines' height, no more: rows take the rest
        self._layout.addWidget(note)
        self.items.append(note)
        self._fit_height(note)
        return note

    def _fit_height(self, label: QLabel) -> None:
        """A wrapped note added to a board already laid out takes the lines it needs at the board's width
        (its own hint assumes a narrow column: three lines where one fits); resizeEvent does it later."""
        margins = self._layout.contentsMargins()
        width = self.width() - margins.left() - margins.right()
        if width > 0:
            label.setMinimumHeight(_wrapped_height(label, width))

    def add_row(self, items: list, stretch: int | None = None, op_factor: float = 2.0,
                equal: bool = False) -> QHBoxLayout:
        """A row of widgets; strings become large operator labels ("×", "=", "→ softmax →").

        Width is shared in proportion to what each grid asks for; an item may be ``(widget, factor)``
        to ask for ``factor`` times more (results keep their numbers, weight matrices become heatmaps).
        ``equal``: in proportion to the factors alone (maps of one shape side by side, drawn alike).
        """
        row = QHBoxLayout()
        row.setSpacing(12)
        for it in items:
            factor = 1
            if isinstance(it, tuple):
                it, factor = it
            w = self.label(it, op_factor, bold=True) if isinstance(it, str) else it
            if isinstance(it, str):
                w.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Preferred)
                w.setMinimumWidth(w.sizeHint().width())
            if isinstance(it, str) or w.sizePolicy().verticalPolicy() == QSizePolicy.Fixed:
                # centred, and a fixed-height item must not cap the height of the whole row
                row.addWidget(w, 0, Qt.AlignVCenter)
            else:  # grids fill the row's height, so spare room enlarges their cells
                row.addWidget(w, factor * (20 if equal else max(1, round(w.sizeHint().width() / 20))))
            self.items.append(w)
        row.addStretch(0)
        group_rows([w for w in self.items[-len(items):] if hasattr(w, "row_group")])
        if stretch is None:  # rows share spare (or missing) height in proportion to what they ask for
            stretch = max([w.sizeHint().height() for w in self.items[-len(items):]] + [1])
        self._layout.addLayout(row, stretch)
        return row

    def finish(self) -> None:
        """Close the stack: spare height goes to the rows of grids (which then enlarge their numbers)."""
        self._layout.addStretch(0)
        if self.width() > 0:  # redrawn in place (no resize to come): notes take the lines they need now
            self._fit_notes(self.width())


def _wrapped_height(label: QLabel, width: int) -> int:
    """Height of ``label``'s text wrapped at ``width``, laid out as its own document (QLabel's
    heightForWidth on rich text with subscripts measured a note of two lines as five)."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    if label.textFormat() == Qt.RichText:
        doc.setHtml(label.text())
    else:
        doc.setPlainText(label.text())
    doc.setTextWidth(width)
    return int(doc.size().height() + 4)


def group_rows(grids: list) -> None:
    """Grids of one row whose rows are the same tokens (same count, labelled alike) line their rows up."""
    by_rows: dict = {}
    for g in grids:
        if g.values.ndim == 2 and g.values.shape[0] > 1:
            by_rows.setdefault(g.values.shape[0], []).append(g)
    for same_count in by_rows.values():
        # unlabelled grids (Z_1 … beside Z_0) join the labelled ones; grids naming other rows (a top-2
        # table beside a 2-layer entropy table) are not the same tokens and keep their own cell height
        named = [tuple(g.row_labels) for g in same_count if g.row_labels]
        ref = named[0] if named else ()
        members = [g for g in same_count if not g.row_labels or tuple(g.row_labels) == ref]
        if len(members) > 1:
            for g in members:
                g.row_group = members


def _drop_layout(layout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        if item.widget() is not None:
            item.widget().hide()
            item.widget().deleteLater()
        elif item.layout() is not None:
            _drop_layout(item.layout())


def _settle(widget: QWidget) -> None:
    """Lay out ``widget`` and every descendant now, top down, shown or not.

    A widget that was never shown keeps its children's resize events pending and its nested layouts
    inactive; an off-screen export must not wait for an event loop to place the grids.
    """
    if widget.testAttribute(Qt.WA_PendingResizeEvent) or not widget.isVisible():
        QApplication.sendEvent(widget, QResizeEvent(widget.size(), QSize()))
        widget.setAttribute(Qt.WA_PendingResizeEvent, False)
    if widget.layout() is not None:
        widget.layout().activate()
    for child in widget.findChildren(QWidget, options=Qt.FindDirectChildrenOnly):
        if not child.isHidden():
            _settle(child)


@contextmanager
def page_layout(host, fig: QWidget, target: QSize, scale: float):
    """Lay ``fig`` out for a page ``target`` (layout px) drawn ``scale`` times larger; yields the scale whose label
    floor (widgets/legible.py) it is laid out at, and puts the figure back after.

    The page's own floor (12 px on the page) when every grid of up to 24 rows and columns names each of them there.
    Else a host that can show fewer rows (``fit_page_rows``: the matrix form's one-head parts, a window of positions
    around the selected query, said in its note) shows as many as the page names at 12 px: two bands of 24 rows and
    three T×T maps do not fit a 720-line page at 12 px (they kept ~8 px labels, every row named in none of them).
    Only a figure that can do neither is laid out at the 1920×1080 slide's floor."""
    board, fitted = scale, False
    with exporting(scale):
        fig.resize(target)
        _settle(fig)
        if not _names_every_token(fig):  # a 1920×1080 page too: a 9-head model's GQA diagram takes a row's height
            fitting = getattr(host, "fit_page_rows", None)

            def fits() -> bool:
                fig.resize(target)
                _settle(fig)
                return _names_every_token(fig)

            fitted = bool(fitting is not None and fitting(fits))
            board = scale if fitted else max(scale, SLIDE_SCALE)
    try:
        with exporting(board):
            fig.resize(target)
            _settle(fig)
            yield board
    finally:
        if fitted:
            host.release_page_rows()  # the screen shows every row again


def _names_every_token(fig: QWidget) -> bool:
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    for g in fig.findChildren(MatrixGrid):
        if not (g.isVisibleTo(fig) and g.values.size):
            continue
        rows, cols = g.values.shape[:2]
        if (g.row_labels and rows <= 24 and g.row_label_stride() > 1) or (g.col_labels and cols <= 24 and g.col_label_stride() > 1):
            return False
    return all(c.row_label_stride() == 1 for c in fig.findChildren(ConcatFigure) if c.isVisibleTo(fig) and 0 < len(c.q_tok) <= 24)


class FigureHostMixin:
    """``render_figure`` / ``figure_size`` for a widget whose figure is ``self.figure_widget``.

    Views that skip work while hidden set ``_stale`` and implement ``_update``; showing them (or
    exporting them) brings them up to date.
    """

    figure_widget: QWidget
    _stale = False
    _forcing = False  # exporting: compute now, even off screen

    def _skip_while_hidden(self) -> bool:
        """True (and remember to update later) when the widget is not on screen."""
        if self.isVisible() or self._forcing:
            self._stale = False
            return False
        self._stale = True
        return True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._update()

    def ensure_current(self) -> None:
        """Bring a hidden (off-screen) widget up to date now: export builds figures that are never shown."""
        if self._stale or not self.isVisible():
            self._forcing = True
            try:
                self._update()
            finally:
                self._forcing = False
            self._stale = False

    def figure_size(self) -> QSize:
        return QSize(1400, 900)

    def render_figure(self, painter: QPainter, rect: QRectF, scale: float = 1.0) -> None:
        """Lay the figure out at ``rect.size() / scale`` and draw it into ``rect`` (controls left out)."""
        rect = QRectF(rect)
        scale = float(scale) if scale and scale > 0 else 1.0
        if self._stale:  # a hidden view skipped its last update; export must show the current state
            self.ensure_current()
        fig = self.figure_widget
        old = fig.size()
        target = QSize(max(16, int(rect.width() / scale)), max(16, int(rect.height() / scale)))
        # a resizable scroll area would snap the figure back to its viewport as soon as it is laid out
        holder = fig.parentWidget().parentWidget() if fig.parentWidget() is not None else None
        scroll = holder if isinstance(holder, QScrollArea) and holder.widgetResizable() else None
        if scroll is not None:
            scroll.setWidgetResizable(False)
        try:
            with page_layout(self, fig, target, scale):  # laid out for the file: the page's label floor
                painter.save()
                painter.fillRect(rect, QColor(fig.style.background if hasattr(fig, "style") else "white"))
                painter.translate(rect.topLeft())
                painter.scale(scale, scale)
                painter.setRenderHint(QPainter.Antialiasing, True)
                painter.setRenderHint(QPainter.TextAntialiasing, True)
                QWidget.render(fig, painter, QPoint(0, 0), QRegion(fig.rect()),
                               QWidget.RenderFlag.DrawChildren | QWidget.RenderFlag.DrawWindowBackground)
                painter.restore()
        finally:
            fig.resize(old)
            _settle(fig)
            if scroll is not None:
                scroll.setWidgetResizable(True)
