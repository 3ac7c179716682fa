"""The window on a small screen (a 1280×720 projector): the same docks, arranged for the head map.

Below ``COMPACT_LINES`` of window height the input dock is one line tall (the sentence on one line; the
examples box and the token strip, whose tokens the head map's axes name anyway, hidden; an encoder–decoder's
target beside the sentence; an image's preview a line tall), the model list narrows and the whole model's
views are tabbed into the head map's group (``view_groups``), so the head map's figure has the views' whole
width: more than half the window's area (38 % beside All heads at 1280×720). Their tabs that do not fit
are folded into the Views menu. At a larger height everything is as it was.

The arrangement is a :class:`CompactArrangement`, a child object of the window (deleted with it), found or
made by :meth:`CompactArrangement.of`; the window's resize event calls :func:`arrange_for_size`. It keeps
no Python reference to the window or its docks (it asks its parent) and schedules with timers it owns,
never a pending ``QTimer.singleShot`` holding a closure over the window: such a closure, pending when a
test closed its window, kept the views' pyqtgraph menus alive as parentless top-level widgets.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QMenu, QPushButton, QTabBar

__all__ = ["COMPACT_LINES", "CompactArrangement", "is_compact", "arrange_for_size", "views_share"]

COMPACT_LINES = 800  # window heights below this are arranged for the head map
MODEL_LIST_SHARE = 0.22  # of a compact window's width for the model list and prediction (400 px at 1080 lines)
HEAD_MAP_SHARE = 0.72  # of the views' width for the head map's group when the groups cannot be merged
WIDE_SHARE = 0.55  # the head map's group at a larger size (the whole model's tabs need the rest)
TAB_ROOM = 8  # px a tab row keeps free (the dock's frame)


def is_compact(height: int) -> bool:
    """Whether a window this tall gets the compact arrangement."""
    return 0 < height < COMPACT_LINES


class CompactArrangement(QObject):
    """The window's arrangement for its size: ``compact`` and the width it was last split at.

    Emits ``changed(compact)`` when the window crosses :data:`COMPACT_LINES`.
    """

    changed = Signal(bool)

    def __init__(self, window):
        super().__init__(window)
        self.setObjectName("CompactArrangement")
        self.compact = False
        self.split_width = 0  # the window width the views were last split for (0: not split)
        self.pinned: str | None = None  # the view last asked for from the Views menu: it keeps its tab
        self._model_sized = False  # this round of splitting has sized the model list
        self._hooked = False  # the views area's "views installed" connected
        self._split_pending = False  # a split asked for while the views were not on screen
        self._split_timer = QTimer(self)  # owned: deleted with the window, so a pending split holds nothing
        self._split_timer.setSingleShot(True)
        self._split_timer.timeout.connect(self.split_views)
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.timeout.connect(self.fit_tabs)

    @classmethod
    def of(cls, window) -> "CompactArrangement":
        """The window's arrangement (made on first use, a child of the window)."""
        found = window.findChild(cls, "CompactArrangement", Qt.FindChildOption.FindDirectChildrenOnly)
        return found if found is not None else cls(window)

    def _presenting(self) -> bool:
        mode = getattr(self.parent(), "presentation_mode", None)
        return mode is not None and mode.active

    def arrange(self) -> None:
        """Input one line tall and a narrower model list when the window is compact; restored otherwise."""
        win = self.parent()
        if self._presenting():  # full screen, one figure: the docks' arrangement is not on screen
            return
        compact = is_compact(win.height())
        if compact == self.compact and (not compact or self.split_width == win.width()):
            return
        crossed = compact != self.compact
        self.compact = compact
        self.split_width = win.width() if compact else 0
        panel = getattr(win, "input_panel", None)
        if panel is not None and panel.compact != compact:
            panel.set_compact(compact)
        docks = getattr(win, "docks", {})
        if compact and "ModelDock" in docks:
            win.resizeDocks([docks["ModelDock"]], [int(win.width() * MODEL_LIST_SHARE)], Qt.Orientation.Horizontal)
        area = getattr(win, "views_area", None)
        if area is not None and not self._hooked:
            # the views are docked after the window is sized (start-up): split them once they are
            self._hooked = True
            area.views_installed.connect(self.split_soon)
            area.layout_reset.connect(self.split_soon)
            area.layout_restored.connect(self.split_soon)  # a saved layout has the two groups apart
            area.folded_asked.connect(self.show_view)
            area.offers_changed.connect(self._refit_soon)
            area.views_installed.connect(self._watch_docks)
            self._watch_docks()
        if compact:
            self.split_soon()  # once the docks are laid out at the new size: the split is in pixels
        elif crossed:
            if area is not None:
                area.split_groups_back()  # the whole model's views beside the head map again
            self.fit_tabs()  # every folded view back
        if crossed:
            self.changed.emit(compact)

    def _watch_docks(self) -> None:
        """Refit the tab rows whenever a view's dock changes width (a split, a neighbour's minimum, the
        user dragging the splitter): the rows are measured at the widths Qt settles on, not those asked."""
        area = getattr(self.parent(), "views_area", None)
        for dock in (area.docks.values() if area is not None else ()):
            dock.removeEventFilter(self)
            dock.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Show and getattr(self, "_split_pending", False) \
                and obj is getattr(self.parent(), "views_area", None):
            self.split_soon()
            return False
        if self.compact and event.type() == QEvent.Type.Resize and obj.isVisible() \
                and event.oldSize().width() != event.size().width():
            self._fit_timer.start(0)
        return False

    def _refit_soon(self) -> None:
        if self.compact:
            self._fit_timer.start(0)

    def split_soon(self) -> None:
        """:meth:`split_views` once the event loop has laid the docks out (a compact window only: a larger
        one keeps the split it has, the user's or the first start's)."""
        if self.compact:
            self._model_sized = False
            area = getattr(self.parent(), "views_area", None)
            if area is not None and not self._presenting():
                # at once, not in the timer's turn: tabbing needs no sizes, and a caller that looked at the
                # views half a second after start-up still saw the two groups apart
                area.merge_groups()
            self._split_timer.start(0)

    def split_views(self) -> None:
        """The head map's group (the single-head readings) gets :data:`HEAD_MAP_SHARE` of the views' width."""
        area = getattr(self.parent(), "views_area", None)
        if area is None:
            return
        if not area.isVisible():
            # a window being closed, not shown yet, or on another page (Training, Walkthrough): split when the
            # views are shown again (a split skipped here left the head map 40 % of a 1280×720 window)
            self._split_pending = True
            area.removeEventFilter(self)
            area.installEventFilter(self)
            return
        self._split_pending = False
        group = area.left_group  # not imported from views_area, which imports this module
        left = [d for n, d in area.docks.items() if n in group and not d.isFloating()]
        right = [d for n, d in area.docks.items() if n not in group and not d.isFloating()]
        win = self.parent()
        docks = getattr(win, "docks", {})
        if self.compact and "ModelDock" in docks and not self._model_sized:
            # again after the first show widened it to 400 px; the views are split in the next turn, at the
            # width this leaves them (split now, the freed width was shared out evenly afterwards)
            self._model_sized = True
            win.resizeDocks([docks["ModelDock"]], [int(win.width() * MODEL_LIST_SHARE)], Qt.Orientation.Horizontal)
            self._split_timer.start(0)
            return
        if self.compact:
            area.merge_groups()  # one group: the head map gets the views' whole width
        width = area.width()
        share = views_share(win)
        if left and right and not area.merged:
            area.resizeDocks([left[0], right[0]], [int(width * share), int(width * (1 - share))],
                             Qt.Orientation.Horizontal)
        self._fit_timer.start(0)  # once the split is laid out: the rows are measured at their real widths

    def fit_tabs(self, pinned: str | None = None) -> None:
        """Compact: each group of tabbed views keeps the tabs its row shows whole, in lecture order (and
        ``pinned``, the view asked for from the views menu); the others are folded, listed in that menu.
        Not compact: every folded view back in its group."""
        area = getattr(self.parent(), "views_area", None)
        if area is None or self._presenting():
            return  # presenting: one figure full screen, the docks' tabs are not on screen (F5 unfolded them)
        self._menu_button().setVisible(self.compact)
        if not self.compact:
            area.unfold()
            return
        pinned = pinned or self.pinned
        fm = QFontMetrics(area.font())
        pad = _tab_padding(area)
        share = views_share(self.parent())
        keep, fold = [], []
        groups = ((None, area.width()),) if area.merged else \
            ((True, area.width() * share), (False, area.width() * (1 - share)))
        for in_left, room in groups:
            names = [n for n, d in area.docks.items() if in_left in (None, n in area.left_group)
                     and not d.isFloating() and (not d.isHidden() or n in area.folded)]
            if not names:
                continue
            room = _group_room(area, names, room)
            # who keeps a tab first: the group's first view (the head map, the whole model), the tab in front
            # (folding never changes what is on screen), the view asked for from the menu; then lecture order
            first = [n for n in names if n == names[0] or area.on_screen(n) or n == pinned]
            names = sorted(first, key=lambda n: (n != names[0], n != pinned)) + [n for n in names if n not in first]
            used, fold_rest = 0.0, False
            for n in names:
                need = fm.horizontalAdvance(area.docks[n].windowTitle()) + pad
                # (a group's first view always stays); after the first fold every later view folds too: a short
                # title further on skipping ahead swapped which views were folded when the type grew (F5)
                if fold_rest or (used + need > room - TAB_ROOM and used > 0):
                    fold_rest = True
                    fold.append(n)
                else:
                    keep.append(n)
                    used += need
        area.unfold(keep)
        area.fold(fold)
        if pinned in area.docks and pinned in keep:
            area.docks[pinned].raise_()

    def show_view(self, name: str) -> None:
        """Bring view ``name`` forward (from the views menu): unfolded if it was, another folded for it."""
        area = getattr(self.parent(), "views_area", None)
        if area is None or name not in area.docks:
            return
        area.unfold([name])
        area.docks[name].show()  # (a view the user had closed, asked for from the menu)
        self.pinned = name
        self.fit_tabs()

    def _menu_button(self) -> QPushButton:
        """The "Views" menu at the right of the Attention/Training/Walkthrough tabs: every view, the
        folded ones too (made once, owned by the tab widget)."""
        tabs = getattr(self.parent(), "tabs", None)
        button = tabs.cornerWidget(Qt.Corner.TopRightCorner) if tabs is not None else None
        if isinstance(button, QPushButton) and button.objectName() == "ViewsMenuButton":
            return button
        # a push button with a menu: one arrow, drawn by the style with room kept for it (a tool button
        # "Views ▾" drew its own corner arrow against the "▾")
        button = QPushButton("Views", tabs)
        button.setObjectName("ViewsMenuButton")
        button.setToolTip("Every attention view; those without room for a tab at this window size too")
        menu = QMenu(button)  # a child of the button: deleted with the window (a parentless menu leaks)
        menu.aboutToShow.connect(self._fill_menu)
        button.setMenu(menu)
        if tabs is not None:
            tabs.setCornerWidget(button, Qt.Corner.TopRightCorner)
        return button

    def _fill_menu(self) -> None:
        area = getattr(self.parent(), "views_area", None)
        menu = self._menu_button().menu()
        menu.clear()
        if area is None:
            return
        for name, dock in area.docks.items():
            act = menu.addAction(dock.windowTitle() + (" (folded)" if name in area.folded else ""))
            act.triggered.connect(lambda _=False, n=name: self.show_view(n))


def arrange_for_size(win) -> CompactArrangement:
    """Arrange ``win`` for its size (its resize event calls this); returns its :class:`CompactArrangement`."""
    arrangement = CompactArrangement.of(win)
    arrangement.arrange()
    return arrangement


def views_share(win) -> float:
    """The head map group's share of the views' width for this window (see :data:`HEAD_MAP_SHARE`)."""
    return HEAD_MAP_SHARE if is_compact(win.height()) else WIDE_SHARE


def _group_room(area, names: list[str], asked: float) -> float:
    """The width a group's tab row has: its tab bar's, the width Qt settled on (a neighbour's minimum, the
    Data set view's at 1280×720, may win over the split asked for).

    Not the group's widest dock: a dock behind a tab keeps the width it had when last in front, so after
    the other group widened the row was measured ~120 px too wide and scrolled (masked-lm at 1280×720)."""
    titles = {area.docks[n].windowTitle() for n in names}
    bars = [b for b in area.findChildren(QTabBar) if b.isVisible() and b.count()
            and any(b.tabText(i) in titles for i in range(b.count()))]
    if bars:
        return float(max(b.width() for b in bars))
    # no row of tabs yet (one view in the group): the dock in front, else any shown one (a dock just shown
    # again can report a stale, smaller width)
    front = [area.docks[n].width() for n in names if area.on_screen(n)]
    shown = [area.docks[n].width() for n in names if area.docks[n].isVisible()]
    return float(max(front or shown)) if (front or shown) else asked


def _tab_padding(area) -> float:
    """A tab's width beyond its text, measured on a tab bar of ``area`` (32 px before one exists)."""
    for bar in area.findChildren(QTabBar):
        if bar.count() and bar.isVisible():  # (Qt keeps unused tab bars, hidden, with stale tabs)
            fm = QFontMetrics(bar.font())
            pad = max(bar.tabRect(i).width() - fm.horizontalAdvance(bar.tabText(i)) for i in range(bar.count()))
            return min(max(pad, 16.0), 64.0)
    return 32.0
