"""A lesson's scene is a page: everything it shows fits the screen, legible, without scrolling.

Some views scroll their figure in a dock rather than shrink it (the patch filters' tiles keep their size in a
narrow dock). On a lesson's page the same view is laid out as an export lays it out — bounded by the page's
height — so the note under the figure is on screen without scrolling (issue 36: "What the patch embedding
learned" scrolled and cut its note at 1280×720 and 1920×1080). :func:`on_page` adapts a scene's view.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from attnviz.gui.views.filter_pca_view import FilterPCAView

__all__ = ["on_page", "PageFilterPCAView"]


class PageFilterPCAView(FilterPCAView):
    """The patch filters on a page: the tiles bounded by the page's height (the export's room), no scroll bars."""

    def _fit_height(self) -> None:
        # (the dock's version makes the canvas as tall as the tiles at their width need: it then scrolls)
        self.canvas.setMinimumHeight(0)
        room = self.vb.geometry().height()
        if room > 0 and abs(room - self._room_h) > 8:  # the dead band ends the redraw → relayout loop
            self._room_h = room
            self._draw()  # (calls this again: within the band now)


def on_page(view):
    """``view`` laid out for a lesson's page (no scrolling); the same object, adapted in place."""
    if type(view) is FilterPCAView:
        # the registry makes the dock's class; the page's differs only in how it fits its height
        view.__class__ = PageFilterPCAView
        for policy in (view.scroll.setVerticalScrollBarPolicy, view.scroll.setHorizontalScrollBarPolicy):
            policy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.vb.sigResized.connect(view._fit_height)  # the tiles' room is known once the page is laid out
        view._fit_height()
    return view
