"""While a new input's forward runs (a long input's takes minutes), everything still showing the previous input is
covered, saying why: the Prediction panel, the token strip, every per-input view (All heads, token lines, rollout,
…, hidden tabs too: a tab brought forward during the run shows its cover) and the Walkthrough. The head map is not
covered: it marks its own map as the previous input's and draws the new input's layer as soon as it is computed.

A component of :class:`attnviz.gui.window.runs.Runs`: it covers when a run has gone on for a moment and uncovers
when its trace or its refusal comes. A view built during the run (its dock first shown) gets the previous trace,
so it is covered as it is built.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject

from attnviz.gui.window.loading_cover import LoadingCover

__all__ = ["RunningCovers", "RunningCover", "NOT_OF_THE_INPUT", "PREDICTION", "FIGURE", "STRIP"]

# docks whose figure is not the input's: the head map marks its own (and previews the new input's layer); the
# data-set views show a data set run through the model, which a new input does not change
NOT_OF_THE_INPUT = frozenset({"HeadMapView", "DatasetView", "QKEmbeddingView"})
PREDICTION = "running the new input…\n(the prediction of the previous input is put away)"
FIGURE = "running the new input…\n(this figure of the previous input is put away)"
STRIP = "running the new input… (the previous input's tokens are put away)"


def _of_the_input(view) -> bool:
    """Whether ``view`` draws the input: not a data-set view, nor one whose own figure trace is None (Compare with
    nothing pinned says so, and that stays true of the new input)."""
    own = getattr(view, "figure_trace", None)  # as figure_actions.figure_trace reads it
    return type(view).__name__ not in NOT_OF_THE_INPUT and (not callable(own) or own() is not None)


class RunningCover(LoadingCover):
    """A cover that stays on top of what its view adds while it is up: a view first shown during the run gets the
    previous trace then, and the widgets it makes for it (token lines' head boxes) were drawn over the cover."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.target and event.type() == QEvent.Type.ChildAdded and self.isVisible() \
                and event.child() is not self:
            self.raise_()
        return super().eventFilter(watched, event)


class RunningCovers:
    """The covers of one window (made when first needed, kept: each is a hidden child of what it covers)."""

    def __init__(self, win):
        self.win = win
        self.up = False
        self._covers: dict[int, LoadingCover] = {}  # id(target) -> its cover
        win.views_area.view_built.connect(self._built)

    def cover(self) -> None:
        self.up = True
        for target, text in self._targets():
            self._cover(target, text)

    def uncover(self) -> None:
        self.up = False
        for key, cover in list(self._covers.items()):
            if shiboken6.isValid(cover):
                cover.uncover()
            else:
                del self._covers[key]  # its target was deleted (a placeholder page replaced)

    def covered(self) -> list:
        """The widgets covered now (tests and the layout audit)."""
        return [c.target for c in self._covers.values() if shiboken6.isValid(c) and not c.isHidden()]

    def _targets(self):
        win = self.win
        yield win.prediction_panel, PREDICTION
        yield win.input_panel.strip, STRIP
        for view in win.views_area.views:
            if _of_the_input(view):
                yield view, FIGURE
        if win.walkthrough is not None:  # built: it shows the previous input's steps
            yield win.walkthrough_page, FIGURE

    def _cover(self, target, text: str) -> None:
        cover = self._covers.get(id(target))
        if cover is None or not shiboken6.isValid(cover) or cover.target is not target:
            if target is self.win.prediction_panel:
                cover = self.win.running_cover  # the window's own (main_window)
            else:
                cover = RunningCover(target)
                if target is self.win.input_panel.strip:
                    cover.setFont(target.font())  # one line in the strip's height
            self._covers[id(target)] = cover
        cover.cover(text)

    def _built(self, view) -> None:
        if self.up and _of_the_input(view):
            self._cover(view, FIGURE)
