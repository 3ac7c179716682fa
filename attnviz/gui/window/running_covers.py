"""While a new input's forward runs (a long input's takes minutes), everything still showing the previous input is
covered, saying why: the Prediction panel, the token strip, every per-input view (All heads, token lines, rollout,
…, hidden tabs too: a tab brought forward during the run shows its cover) and the Walkthrough. The head map is not
covered: it marks its own map as the previous input's and draws the new input's layer as soon as it is computed.

A component of :class:`attnviz.gui.window.runs.Runs`: it covers when a run has gone on for a moment and uncovers
when its trace or its refusal comes. A view built during the run (its dock first shown) gets the previous trace,
so it is covered as it is built. Each cover says what is really going on: a model switch asked during the run
drops the run, so its covers say the model loads (:func:`loading_texts`); with nothing shown (a new model's first
input, or after a refusal) nothing of a previous input is under them, and they say so (:func:`nothing_yet_texts`).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject

from attnviz.gui.window.loading_cover import LoadingCover

__all__ = ["RunningCovers", "RunningCover", "NOT_OF_THE_INPUT", "PREDICTION", "FIGURE", "STRIP", "loading_text",
           "loading_texts", "nothing_yet_texts"]

# docks whose figure is not the input's: the head map marks its own (and previews the new input's layer); the
# data-set views show a data set run through the model, which a new input does not change
NOT_OF_THE_INPUT = frozenset({"HeadMapView", "DatasetView", "QKEmbeddingView"})
PREDICTION = "running the new input…\n(the prediction of the previous input is put away)"
FIGURE = "running the new input…\n(this figure of the previous input is put away)"
STRIP = "running the new input… (the previous input's tokens are put away)"


def loading_text(name: str, one_line: bool = False) -> str:
    """What covers the previous model's figures while ``name`` loads."""
    return f"loading {name}…" + (" " if one_line else "\n") + "(the previous model's figures are put away)"


def loading_texts(name: str) -> tuple[str, str, str]:
    """(prediction, figure, strip) texts while ``name`` loads: a switch asked during a run drops that run."""
    return loading_text(name), loading_text(name), loading_text(name, one_line=True)


def nothing_yet_texts(name: str, first: bool) -> tuple[str, str, str]:
    """(prediction, figure, strip) texts over views that show nothing while model ``name`` runs (its ``first``
    input after a switch, or an input after a refused one): no previous input is under them."""
    what = f"{name} runs its first input…" if first else f"{name} runs the input…"
    return (f"nothing to show yet: {what}",) * 3


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
        self._texts = (PREDICTION, FIGURE, STRIP)  # what the covers up say
        win.views_area.view_built.connect(self._built)

    def cover(self, texts: tuple[str, str, str] | None = None) -> None:
        """Cover everything of the input with ``texts`` (prediction, figure, strip); None: what the run does."""
        self.up = True
        self._texts = texts or self._run_texts()
        for target, text in self._targets():
            self._cover(target, text)

    def _run_texts(self) -> tuple[str, str, str]:
        state = self.win.state
        if state.shown.trace is not None:
            return PREDICTION, FIGURE, STRIP  # the previous input's figures are under the covers
        loaded = state.model.loaded
        return nothing_yet_texts(getattr(loaded, "name", None) or "the model", state.model.new_model)

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
        prediction, figure, strip = self._texts
        yield win.prediction_panel, prediction
        yield win.input_panel.strip, strip
        for view in win.views_area.views:
            if self._covers_view(view):
                yield view, figure
        if win.walkthrough is not None:  # built: it shows the previous input's steps
            yield win.walkthrough_page, figure

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

    def _covers_view(self, view) -> bool:
        # the head map marks its own map as the previous input's; with a model loading or nothing shown there is
        # no such map, and its "no input yet" would be wrong: it is covered like the rest
        own_mark = self._texts == (PREDICTION, FIGURE, STRIP)
        return _of_the_input(view) or (not own_mark and type(view).__name__ == "HeadMapView")

    def _built(self, view) -> None:
        if self.up and self._covers_view(view):
            self._cover(view, self._texts[1])
