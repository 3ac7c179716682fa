"""The attention views, each in a dock of a nested main window (the "Attention" tab).

Views are discovered, not listed here: ``attnviz.gui.views.VIEW_CLASSES`` when the views package defines it,
otherwise every ``*View`` subclass of ``BaseView`` in a ``views/*_view.py`` module. A view that is
not written yet simply has no dock. Hidden docks (a background tab) are updated when they are shown,
so a keystroke only pays for the views on screen.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QTabBar, QTabWidget

__all__ = ["ViewsArea", "discover_view_classes", "PREFERRED_ORDER"]

log = logging.getLogger(__name__)

# lecture order: the single head first, then the whole model, then the other readings of the same trace
PREFERRED_ORDER = ("HeadMapView", "ModelView", "TokenLinesView", "RolloutView")
LEFT_GROUP = frozenset({"HeadMapView", "TokenLinesView", "RolloutView"})


def discover_view_classes() -> list[type]:
    """The view classes the app docks: the package's per-input views, then the data-set views (GUI thread:
    they import Qt)."""
    from attnviz.gui.views import VIEW_CLASSES
    from attnviz.gui.views.dataset_view import DatasetView
    from attnviz.gui.views.qk_embedding_view import QKEmbeddingView

    classes = [*VIEW_CLASSES, DatasetView, QKEmbeddingView]
    rank = {n: i for i, n in enumerate(PREFERRED_ORDER)}
    return sorted(dict.fromkeys(classes), key=lambda c: (rank.get(c.__name__, len(rank)), c.__name__))


class ViewsArea(QMainWindow):
    """Hosts one dock per view; forwards trace, selection and style to all of them."""

    views_installed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowFlags(Qt.WindowType.Widget)  # a main window used as a widget: it gets dock areas
        self.setDockNestingEnabled(True)
        self.setTabPosition(Qt.DockWidgetArea.AllDockWidgetAreas, QTabWidget.TabPosition.North)
        self.setDockOptions(QMainWindow.DockOption.AllowTabbedDocks | QMainWindow.DockOption.AllowNestedDocks
                            | QMainWindow.DockOption.AnimatedDocks)
        self._waiting = QLabel("Loading the attention views…", self)
        self._waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setCentralWidget(self._waiting)
        self.views: list = []
        self.docks: dict[str, QDockWidget] = {}
        self._dirty: set[int] = set()
        self._visible: list[bool] = []
        self._trace = None
        self._unelide_pending = False

    def install(self, classes: list[type], selection, style) -> None:
        """Create the views (GUI thread) and dock them: the single-head readings on the left (55 %),
        the whole model and the analysis views tabbed on the right."""
        for cls in classes:
            try:
                view = cls(selection=selection, style=style)
            except Exception as exc:  # noqa: BLE001 - a broken view is left out, the others work
                log.warning("cannot create %s: %s", cls.__name__, exc)
                continue
            title = getattr(cls, "title", cls.__name__)
            dock = QDockWidget(title, self)
            dock.setObjectName(cls.__name__)  # stable name: the layout is saved and restored by it
            dock.setToolTip(title)
            dock.setWidget(view)
            dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                             | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                             | QDockWidget.DockWidgetFeature.DockWidgetClosable)
            i = len(self.views)
            self.views.append(view)
            self._visible.append(True)
            self.docks[cls.__name__] = dock
            dock.visibilityChanged.connect(lambda visible, i=i: self._shown(i, visible))
        if self.views:
            self.takeCentralWidget().deleteLater()
            self.setCentralWidget(None)
            self.reset_layout()
        else:
            self._waiting.setText("No attention views are installed yet.")
        if self._trace is not None:
            self.set_trace(self._trace)
        self.views_installed.emit()

    def reset_layout(self) -> None:
        """Every view docked and shown in the first-start arrangement: the single-head readings tabbed
        on the left (55 %), the whole model and the analysis views tabbed on the right."""
        groups: dict[bool, list[QDockWidget]] = {True: [], False: []}
        for name, dock in self.docks.items():
            left = name in LEFT_GROUP
            dock.setFloating(False)
            self.removeDockWidget(dock)
            group = groups[left]
            if group:
                self.tabifyDockWidget(group[0], dock)
            else:
                area = Qt.DockWidgetArea.LeftDockWidgetArea if left else Qt.DockWidgetArea.RightDockWidgetArea
                self.addDockWidget(area, dock)
            dock.show()
            group.append(dock)
        for group in groups.values():
            if group:
                group[0].raise_()  # the first of each group is in front
        if groups[True] and groups[False]:
            pair = [groups[True][0], groups[False][0]]
            # once the docks are laid out: sizes are pixels, so they need the real width
            QTimer.singleShot(0, self, lambda: self.resizeDocks(
                pair, [int(self.width() * 0.55), int(self.width() * 0.45)], Qt.Orientation.Horizontal))

    def childEvent(self, event) -> None:
        # Qt makes a tab bar for each group of tabbed docks (and anew on restoreState); its default
        # elides the names to "M…", "Attentio…": show whole names and scroll instead
        # (at ChildAdded the child is not a QTabBar yet: look once the event loop runs again)
        super().childEvent(event)
        if event.type() == QEvent.Type.ChildAdded and not getattr(self, "_unelide_pending", True):
            self._unelide_pending = True
            QTimer.singleShot(0, self, self._unelide_tabs)

    def _unelide_tabs(self) -> None:
        self._unelide_pending = False
        for bar in self.findChildren(QTabBar):
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)

    def _shown(self, i: int, visible: bool) -> None:
        # Qt says when a dock appears or disappears, including its tab being selected in a tab group
        self._visible[i] = visible
        if visible and i in self._dirty:
            self._dirty.discard(i)
            self.views[i].set_trace(self._trace)

    def visible_views(self) -> list:
        return [v for i, v in enumerate(self.views) if self._visible[i] and v.isVisible()]

    def set_trace(self, trace) -> None:
        """Give ``trace`` to every view on screen now, and to the others when they are shown."""
        self._trace = trace
        never_shown = not self.window().isVisible()  # tests and export: update everything
        for i, view in enumerate(self.views):
            if never_shown or (self._visible[i] and view.isVisible()):
                self._dirty.discard(i)
                view.set_trace(trace)
            else:
                if view.trace is not None and view.trace is not trace:
                    view.set_trace(None)  # a hidden dock never holds another model's or input's figure
                self._dirty.add(i)

    def set_style(self, style) -> None:
        for view in self.views:
            view.set_style(style)
