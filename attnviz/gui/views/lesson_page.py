"""A lesson's scene is a page: everything it shows fits the screen, legible, without scrolling.

Some views scroll their figure in a dock rather than shrink it (the patch filters' tiles keep their size in a
narrow dock). On a lesson's page the same view is laid out for the page — its tiles bounded by the page's
height as an export bounds them — so the note under the figure is on screen without scrolling (issue 36: "What
the patch embedding learned" scrolled and cut its note at 1280×720 and 1920×1080). A walkthrough figure's board
gives the dock's spacing between its rows to the rows ("All queries at once" scrolled 24 px in a 1216×662
presented window). :func:`on_page` adapts a scene's view.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from attnviz.gui.views.filter_pca_view import FilterPCAView

__all__ = ["on_page", "page_columns"]

MAX_PAGE_COLS = 14  # a wide, short page: more tiles a row than the paper's seven, each larger


def page_columns(n: int, width: float, room: float, line: float, tile: int, gap: int, min_pitch: float,
                 most: int = MAX_PAGE_COLS) -> tuple[int, float]:
    """(tiles a row, pitch in px) for ``n`` tiles of ``tile`` units (+ ``gap``) with a two-line caption (``line``
    px) under each, in ``width`` × ``room`` px: the largest pitch, among the counts whose pitch leaves a caption
    its ``min_pitch`` (else the largest pitch of all; captions would touch)."""
    best = None
    for cols in range(2, max(2, min(most, n)) + 1):
        rows = -(-n // cols)
        by_height = (0.96 * room / rows - 2.8 * line) * (tile + gap) / tile  # a row: the tile and its caption
        pitch = min((width - 24) / cols, by_height)
        fits = pitch >= min_pitch
        if best is None or (fits, pitch) > (best[2], best[1]):
            best = (cols, pitch, fits)
    return best[0], best[1]


def _fit_filters_to_page(view) -> None:
    """The patch filters on a page: tiles a row and their size chosen for the page's width and height (the dock's
    version makes the canvas as tall as the tiles at their width need, and scrolls)."""
    view.canvas.setMinimumHeight(0)
    room, width = view.vb.geometry().height(), float(view.scroll.viewport().width())
    if view.components is None or room <= 0 or width <= 0:
        return
    tile = view.components.shape[1]
    line = QFontMetricsF(view.style.font(1.0)).height()
    cols, _ = page_columns(len(view.ratio), width, room, line, tile, max(1, tile // 4), view._cell_px())
    # the dead band ends the draw → layout → resize loop (drawing calls this again)
    if cols != view.cols or abs(room - view._room_h) > 8 or abs(width - view._width) > 8:
        view.cols, view._width, view._room_h = cols, width, room
        view._draw()


# a walkthrough figure's board on a page: the dock's 10 px between rows and round the board give the height to the
# rows (the matrix form's T×T maps) — "All queries at once" needed 600 px in a 576 px page and scrolled 24 px in a
# 1216×662 presented window
PAGE_BOARD_MARGINS = (10, 2, 10, 2)
PAGE_BOARD_SPACING = 4


def _tighten_board(view) -> None:
    """A walkthrough figure (a board of rows in a scroll area) with the page's margins and spacing, no frame."""
    from PySide6.QtWidgets import QFrame

    view.board.layout().setContentsMargins(*PAGE_BOARD_MARGINS)
    view.board.layout().setSpacing(PAGE_BOARD_SPACING)
    view.scroll.setFrameShape(QFrame.Shape.NoFrame)  # the page is the frame: 2 px more for the figure


def on_page(view):
    """``view`` laid out for a lesson's page (no scrolling); the same object, adapted in place."""
    if getattr(view, "board", None) is not None and getattr(view, "scroll", None) is not None:
        _tighten_board(view)  # duck-typed: the walkthrough is a layer above the views (import-linter)
    if type(view) is FilterPCAView:
        import weakref

        # the view's own calls (after drawing, on resize) reach the page's fit through the instance: the
        # registry made the dock's class (swapping the class of the live Qt object crashed shiboken)
        ref = weakref.ref(view)
        view._fit_height = lambda: _fit_ref(ref)
        for policy in (view.scroll.setVerticalScrollBarPolicy, view.scroll.setHorizontalScrollBarPolicy):
            policy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.vb.sigResized.connect(lambda *_: _fit_ref(ref))  # the tiles' room is known once the page is laid out
        view._fit_height()
    return view


def _fit_ref(ref) -> None:
    """The page's fit of a view held weakly (a connection must not keep a closed scene's view alive)."""
    import shiboken6

    view = ref()
    if view is not None and shiboken6.isValid(view) and shiboken6.isValid(view.vb):
        _fit_filters_to_page(view)
