"""The attention views, each in a dock of a nested main window (the "Attention" tab).

Views are discovered, not listed here: ``attnviz.gui.views.VIEW_CLASSES`` when the views package defines it,
otherwise every ``*View`` subclass of ``BaseView`` in a ``views/*_view.py`` module. A view that is
not written yet simply has no dock. Hidden docks (a background tab) are updated when they are shown,
so a keystroke only pays for the views on screen.

Views are built when first needed (issue 18: building all of them took ~0.3 s of the GUI thread at
start-up). Every dock exists from the start (so the layout, View ▸ Panels and Reset layout know them),
holding a placeholder until its view is built: when the dock is first shown, or in idle time one view
per event-loop turn (``build_next``). A view built late gets the current trace at once if it is on
screen, otherwise when it is shown, like any hidden view.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QTabBar, QTabWidget

from attnviz.gui.panels import view_groups
from attnviz.gui.panels.last_pressed import LastPressed

__all__ = ["ViewsArea", "ViewDock", "discover_view_classes", "order_view_classes", "PREFERRED_ORDER"]

log = logging.getLogger(__name__)

# lecture order: the single head first, then the whole model, then the other readings of the same trace
PREFERRED_ORDER = ("HeadMapView", "ModelView", "TokenLinesView", "RolloutView")
# the left group (55 % of the width) also takes the per-input analyses of positions and distances, so
# neither group's tab bar scrolls at 1920×1080 (issue 28: nine tabs on the right were clipped)
LEFT_GROUP = frozenset({"HeadMapView", "TokenLinesView", "RolloutView", "AttentionDistanceView",
                        "PositionSimilarityView", "PositionalEncodingView",
                        "CompareView"})  # where pinning brings it: three maps need the wider group


def discover_view_classes() -> list[type]:
    """The view classes the app docks: the package's per-input views, then the data-set views (GUI thread:
    they import Qt)."""
    from attnviz.gui.views import VIEW_CLASSES
    from attnviz.gui.views.dataset_view import DatasetView
    from attnviz.gui.views.qk_embedding_view import QKEmbeddingView

    return order_view_classes([*VIEW_CLASSES, DatasetView, QKEmbeddingView])


def order_view_classes(classes) -> list[type]:
    """``classes`` without repeats, in lecture order (:data:`PREFERRED_ORDER`, then by name)."""
    rank = {n: i for i, n in enumerate(PREFERRED_ORDER)}
    return sorted(dict.fromkeys(classes), key=lambda c: (rank.get(c.__name__, len(rank)), c.__name__))


class ViewDock(QDockWidget):
    """A view's dock: raising a folded one (a compact window had no room for its tab) opens it again."""

    def raise_(self) -> None:
        area = self.parent()
        if isinstance(area, ViewsArea) and self.objectName() in area.folded:
            area.unfold([self.objectName()])
            area.folded_asked.emit(self.objectName())  # the compact layout makes room for its tab
        super().raise_()


class ViewsArea(QMainWindow):
    """Hosts one dock per view; forwards trace, selection and style to the views built so far and hands
    them to the others when they are built."""

    views_installed = Signal()
    left_group = LEFT_GROUP  # the head map's group of docks (the compact layout splits by it)
    view_built = Signal(object)  # the view, just built (and given the current trace if on screen)
    folded_asked = Signal(str)  # a folded view raised (shown again): the compact layout refits the tab rows
    layout_reset = Signal()  # every dock back in the first-start arrangement (the compact layout refits)
    layout_restored = Signal()  # a saved layout restored (the compact layout merges its groups again)
    offers_changed = Signal()  # docks closed or opened for the model shown (the compact layout refits the tab rows)

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
        self.views: list = []  # the views built so far, in the order they were built
        self.pressed = LastPressed(lambda: self.views, self)  # the view last clicked (figure_actions)
        self.docks: dict[str, QDockWidget] = {}
        self._classes: dict[str, type] = {}  # dock name -> view class, for every dock
        self._built: dict[str, object] = {}  # dock name -> its view, once built
        self._made: dict[str, object] = {}  # dock name -> its view, made but not docked yet (build_next)
        self._dirty: set[str] = set()  # built views that owe an update (hidden when the trace came)
        self._visible: dict[str, bool] = {}
        self.folded: list[str] = []  # docks closed while the window is compact (see fold)
        self.merged = False  # the whole model's group tabbed into the head map's (a compact window, see merge_groups)
        self._selection = self._style = None
        self._trace = None
        self._empty_reason: str | None = None  # why no trace is shown (None: no input has run yet)
        self._unelide_timer = QTimer(self)  # owned, like the timers below
        self._unelide_timer.setSingleShot(True)
        self._unelide_timer.timeout.connect(self._unelide_tabs)
        self._unelide_pending = False
        self._arranging = False  # docks flicker visible while Qt arranges them: build nothing meanwhile
        # an owned timer, not QTimer.singleShot(0, self, method): a pending one of those keeps the area
        # (and its views) alive if the window is deleted meanwhile
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.timeout.connect(self._build_one_visible)
        self._split_timer = QTimer(self)  # the two groups' widths, once the docks are laid out
        self._split_timer.setSingleShot(True)
        self._split_timer.timeout.connect(self._split_groups)

    def install(self, classes: list[type], selection, style, build: bool = True) -> None:
        """Dock every view: the single-head readings tabbed on the left (55 %), the whole model and the
        analysis views tabbed on the right. With ``build`` (default) every view is built now; without,
        only placeholders: call :meth:`build_visible` once the layout is final."""
        self._selection, self._style = selection, style
        for cls in classes:
            name = cls.__name__
            title = getattr(cls, "title", name)
            dock = ViewDock(getattr(cls, "tab_title", None) or title, self)
            dock.setObjectName(name)  # stable name: the layout is saved and restored by it
            dock.setToolTip(title)  # the full name
            dock.setWidget(_placeholder(title, dock))
            dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                             | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                             | QDockWidget.DockWidgetFeature.DockWidgetClosable)
            self.docks[name] = dock
            self._classes[name] = cls
            self._visible[name] = True
            dock.visibilityChanged.connect(lambda visible, name=name: self._shown(name, visible))
        if self.docks:
            self.takeCentralWidget().deleteLater()
            self.setCentralWidget(None)
            self._arrange(self._reset_docks)
        else:
            self._waiting.setText("No attention views are installed yet.")
        if build:
            while self.build_next(visible_first=False) is not None:
                pass
        self.views_installed.emit()

    # -- building ----------------------------------------------------------------------------------
    def unbuilt(self) -> list[str]:
        """Names of the docks whose view is not built yet (placeholders)."""
        return [n for n in self.docks if n not in self._built]

    def on_screen(self, name: str) -> bool:
        """Whether dock ``name`` is shown now (not closed, not a background tab)."""
        dock = self.docks[name]
        return self._visible.get(name, False) and dock.isVisible()

    def build(self, name: str):
        """The view of dock ``name``, built now if it was not (None if it cannot be built)."""
        if name in self._built:
            return self._built[name]
        made = self._made.pop(name, None)
        if made is None:
            made = self._make(name)
        return self._dock(name, made) if made is not None else None

    def _make(self, name: str):
        """A new view for dock ``name``, not docked yet (None if it cannot be built)."""
        cls = self._classes.get(name)
        if cls is None:
            return None
        try:
            # a hidden child of its dock until docked: a window closed meanwhile deletes it too
            return cls(selection=self._selection, style=self._style, parent=self.docks[name])
        except Exception as exc:  # noqa: BLE001 - a broken view is left out, the others work
            log.warning("cannot create %s: %s", name, exc)
            self._classes.pop(name)
            self.docks[name].widget().setText(f"{getattr(cls, 'title', name)} could not be built: {exc}")
            return None

    def _dock(self, name: str, view):
        dock = self.docks[name]
        old = dock.widget()
        dock.setWidget(view)
        old.deleteLater()
        self._built[name] = view
        self.views.append(view)
        if self._trace is not None or self._empty_reason:
            if self.on_screen(name) or not self.window().isVisible():
                view.set_trace(self._trace, self._empty_reason)
            else:
                self._dirty.add(name)
        self.view_built.emit(view)
        return view

    def build_visible(self) -> list:
        """Build the views on screen now (the front tab of each group); returns them."""
        return [self.build(n) for n in self.unbuilt() if self.on_screen(n)]

    def build_visible_step(self) -> bool:
        """Half of building one view on screen: make it (off screen), or dock the one made; True while
        views on screen remain unbuilt.

        Building the two or three views on screen in one event-loop turn froze the window for 90–97 ms
        at start-up, and one view made and docked in one turn for 75–98 ms (their first use of pyqtgraph
        creates PySide6 types); docking then lays the area out."""
        todo = [n for n in self.unbuilt() if n in self._classes and self.on_screen(n)]
        if not todo:
            return False
        name = todo[0]
        if name in self._made:
            self.build(name)  # docks the view made in the turn before
        else:
            view = self._make(name)
            if view is not None:
                self._made[name] = view
        return True

    def _build_one_visible(self) -> None:
        """After a layout change: build the views on screen, half a view per event-loop turn."""
        if self.build_visible_step():
            self._build_timer.start(0)

    def build_next(self, visible_first: bool = True):
        """Build one more view (those on screen first); returns it, or None when all are built.

        A view off screen is made in one call and docked in the next: docking re-lays out the area
        (a view wider than its placeholder widens its tab group), which repaints the views on screen,
        and both in one event-loop turn froze the window for ~0.1 s (issue 18)."""
        if self._made:
            name, view = self._made.popitem()
            return self._dock(name, view)
        names = [n for n in self.unbuilt() if n in self._classes]
        if visible_first:
            names.sort(key=lambda n: not self.on_screen(n))
        for name in names:
            if self.on_screen(name) or not self.window().isVisible():
                view = self.build(name)
            else:
                view = self._made[name] = self._make(name)
                if view is None:
                    del self._made[name]
            if view is not None:
                return view
        return None

    # -- layout --------------------------------------------------------------------------------------
    def _arrange(self, fn, *args):
        """Run a layout change with building paused; then build what ended up on screen (next turn,
        once Qt has settled which tab of each group is in front)."""
        self._arranging = True
        try:
            return fn(*args)
        finally:
            self._arranging = False
            if self._selection is not None:
                self._build_timer.start(0)

    def restoreState(self, state, version: int = 0) -> bool:  # noqa: N802 - Qt's name
        self.folded = []
        self.merged = False  # a saved layout has its two groups (saveState splits them back first)
        try:
            return self._arrange(super().restoreState, state, version)
        finally:
            view_groups.offer_again(self)  # the restored layout's docks for the model shown
            self.layout_restored.emit()

    def saveState(self, version: int = 0):  # noqa: N802 - Qt's name
        """The layout as the user arranged it (see ``view_groups.save_state``)."""
        return view_groups.save_state(self, lambda: super(ViewsArea, self).saveState(version))

    def merge_groups(self) -> None:
        """The whole model's views tabbed into the head map's group (a compact window; see ``view_groups``)."""
        view_groups.merge(self)

    def split_groups_back(self, resplit: bool = True) -> None:
        """The whole model's views in their own group again (see ``view_groups``)."""
        view_groups.split_back(self, resplit)

    def fold(self, names) -> None:
        """Close the docks ``names`` for now (a compact window: their group's tab row cannot show them
        whole); :meth:`unfold` opens them again where they were. A dock the user closed is not touched."""
        for name in names:
            dock = self.docks.get(name)
            if dock is not None and name not in self.folded and not dock.isHidden():
                self.folded.append(name)
                dock.hide()

    def unfold(self, names=None) -> list[str]:
        """Open the folded docks (``names``, default all) again in their groups; returns those opened."""
        opened = [n for n in self.folded if names is None or n in names]
        self.folded = [n for n in self.folded if n not in opened]
        front = [d for n, d in self.docks.items() if self.on_screen(n)]  # a tab shown again may come forward
        for name in opened:
            self.docks[name].show()
        for dock in front if opened else ():
            QDockWidget.raise_(dock)  # (not ViewDock.raise_: these are not folded)
        return opened

    def reset_layout(self) -> None:
        """Every view docked and shown in the first-start arrangement: the single-head readings and the
        per-input position analyses tabbed on the left (55 %), the whole model and the data-set and
        embedding views tabbed on the right."""
        self._arrange(self._reset_docks)

    def _reset_docks(self) -> None:
        self.folded = []  # every dock is shown again below
        self.merged = False  # two groups again (a compact window merges them once laid out)
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
            # once the docks are laid out: sizes are pixels, so they need the real width (an owned timer:
            # a pending singleShot closure over the docks kept them alive after their window was deleted)
            self._split_timer.start(0)
        self.layout_reset.emit()

    def _split_groups(self) -> None:
        """The head map's group gets 55 % of the width (a 1280×720 window: 72 %, the head map needs the room)."""
        from attnviz.gui.panels.compact_layout import views_share

        left, right = view_groups.groups(self)
        if left and right and not self.merged:
            share = views_share(self.window())
            self.resizeDocks([left[0], right[0]], [int(self.width() * share), int(self.width() * (1 - share))],
                             Qt.Orientation.Horizontal)

    def childEvent(self, event) -> None:
        # Qt makes a tab bar for each group of tabbed docks (and anew on restoreState); its default
        # elides the names to "M…", "Attentio…": show whole names and scroll instead
        # (at ChildAdded the child is not a QTabBar yet: look once the event loop runs again)
        super().childEvent(event)
        if event.type() == QEvent.Type.ChildAdded and not getattr(self, "_unelide_pending", True):
            self._unelide_pending = True
            self._unelide_timer.start(0)

    def _unelide_tabs(self) -> None:
        self._unelide_pending = False
        for bar in self.findChildren(QTabBar):
            bar.setElideMode(Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)

    # -- trace and style -------------------------------------------------------------------------------
    def _shown(self, name: str, visible: bool) -> None:
        # Qt says when a dock appears or disappears, including its tab being selected in a tab group
        self._visible[name] = visible
        if not visible:
            return
        if name not in self._built:
            # a dock shown for the first time; not while the window closes or is being deleted (Qt brings
            # the next tab forward as it destroys the docks: a view built then would outlive them)
            if self._selection is not None and not self._arranging and self.window().isVisible():
                self.build(name)
            return
        if name in self._dirty:
            self._dirty.discard(name)
            self._built[name].set_trace(self._trace, self._empty_reason)

    def visible_views(self) -> list:
        return [v for n, v in self._built.items() if self._visible.get(n, False) and v.isVisible()]

    def set_trace(self, trace, empty_reason: str | None = None) -> None:
        """Give ``trace`` to every view on screen now, and to the others when they are shown (or built);
        with None, ``empty_reason`` is what the views say about why they are empty (an input refused)."""
        self._trace, self._empty_reason = trace, (empty_reason if trace is None else None)
        view_groups.offer_for_model(self, trace)  # a view with nothing for this model: its tab closed
        never_shown = not self.window().isVisible()  # tests and export: update everything
        for name, view in self._built.items():
            if never_shown or (self._visible.get(name, False) and view.isVisible()):
                self._dirty.discard(name)
                view.set_trace(trace, self._empty_reason)
            else:
                if view.trace is not None and view.trace is not trace:
                    view.set_trace(None)  # a hidden dock never holds another model's or input's figure
                self._dirty.add(name)

    def set_style(self, style) -> None:
        self._style = style
        for view in self.views:
            view.set_style(style)


def _placeholder(title: str, parent) -> QLabel:
    label = QLabel(f"Preparing {title}…", parent)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return label
