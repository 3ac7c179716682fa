"""Pin and compare: the user pins the trace on screen (View ▸ Pin this trace, Ctrl+P); the Compare view then
draws the same head of the pinned and the current trace on one colour scale, and their difference.

Two inputs on one model (pin, type another sentence) or one input on two models of the same shape (pin,
load the other model: the input stays). The pinned trace is part of the window's state
(``state.shown.pinned``); this component pushes it to the Compare view and says in a notice when the
current trace cannot be compared with it (unlike shapes). The pair itself is made and drawn by the one
compare figure (:func:`attnviz.analysis.trace_compare.pair_traces`, :mod:`attnviz.gui.views.compare_view`),
as ``attnviz.compare`` and ``export --compare`` draw it.
"""

from __future__ import annotations

__all__ = ["ComparePin", "COMPARE_DOCK"]

COMPARE_DOCK = "CompareView"  # the Compare view's dock (named by its class, as every view's)
HEAD_MAP_DOCK = "HeadMapView"


class ComparePin:
    """Pins the shown trace into the window's state and keeps the Compare view(s) given it."""

    def __init__(self, win):
        self.win = win
        self.state = win.state
        self.state.shown.connect(self._shown_changed)
        win.views_area.view_built.connect(self._view_built)
        # after the whole show: the run's own notice (or its dismissal) comes first, this one joins it
        win.trace_shown.connect(self._trace_shown)

    def pin(self) -> None:
        """Pin the trace on screen (a notice when there is none yet); the Compare view comes to the front."""
        trace = self.state.shown.trace
        if trace is None:
            self.win.notify("nothing to pin yet: load a model and an input", "info")
            return
        self.state.shown.pinned = trace
        self._bring_forward()
        name = trace.description.model_name or self.state.model.ref or "this model"
        self.win.notify(f"pinned {name} on “{_short(trace)}”: change the input or the model, and the Compare "
                        "view draws the pinned and the current trace side by side with their difference", "info")

    def _bring_forward(self) -> None:
        """The Compare view in front, in the head map's (wider) group of tabs: three maps side by side need
        the width the narrow right-hand group does not have."""
        area = self.win.views_area
        dock, head = area.docks.get(COMPARE_DOCK), area.docks.get(HEAD_MAP_DOCK)
        if dock is None:
            return
        if head is not None and not dock.isFloating() and dock not in area.tabifiedDockWidgets(head):
            area.tabifyDockWidget(head, dock)
        dock.show()
        dock.raise_()
        from attnviz.gui.panels.compact_layout import CompactArrangement

        # a compact window refits its tab rows around the Compare tab (a new tab must never make a row scroll)
        CompactArrangement.of(self.win).show_view(COMPARE_DOCK)

    def unpin(self) -> None:
        """Forget the pinned trace (the Compare view says there is nothing to compare)."""
        if self.state.shown.pinned is not None:
            self.state.shown.pinned = None
            self.win.statusBar().showMessage("pinned trace released", 3000)

    def _compare_views(self) -> list:
        return [v for v in self.win.views_area.views if hasattr(v, "set_pinned")]

    def _view_built(self, view) -> None:
        if hasattr(view, "set_pinned"):
            view.set_pinned(self.state.shown.pinned)

    def _shown_changed(self, name, value, _old) -> None:
        if name == "pinned":
            for view in self._compare_views():
                view.set_pinned(value)

    def _trace_shown(self, trace) -> None:
        """A new trace that cannot stand beside the pinned one: say why while the Compare view is on screen
        (the view says it too, in its figure), beside the run's own notice if it has one."""
        pinned = self.state.shown.pinned
        if pinned is None or trace is None or COMPARE_DOCK not in self.win.views_area.docks:
            return
        from attnviz.analysis.trace_compare import comparable

        why = comparable(pinned, trace)
        if why and self.win.views_area.on_screen(COMPARE_DOCK):
            own = trace.description.notice
            text = f"{why} (the pinned trace stays: View ▸ Unpin to let it go)"
            self.win.notify(f"{own} · {text}" if own else text, "warning")


def _short(trace, limit: int = 40) -> str:
    text = trace.description.input_text
    text = text if isinstance(text, str) and text else " ".join(map(str, trace.tokens))
    return text if len(text) <= limit else text[:limit - 1] + "…"
