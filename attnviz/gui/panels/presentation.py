"""Presentation mode, figure first: side panels, menus and controls hide, one figure fills the screen.

``enter_presentation(win, widget=None)`` shows ``widget`` (default: the current figure — the view last
clicked in the Attention tab, the visible walkthrough sub-tab, the training page) full screen in the
presentation style (large type, thick lines); Esc (or F5 again) puts everything back as it was.
Page Down / Page Up (what a presenter's clicker sends) step through the walkthrough's steps, or through
a lesson's scenes (:mod:`attnviz.gui.lesson_mode` presents its stage with the same two functions).
"""

from __future__ import annotations

import weakref

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

from attnviz.gui.panels.presentation_hint import PresentationHint, end_text, leave_text, step_position
from attnviz.gui.panels.presentation_titles import enlarge_group_titles, restore_group_titles

__all__ = ["PresentationMode", "enter_presentation", "leave_presentation", "presentation_mode"]

# the window's actions that step the selection: (action name, field, delta)
SELECTION_KEYS = (("next_layer", "layer", 1), ("prev_layer", "layer", -1), ("next_head", "head", 1),
                  ("prev_head", "head", -1))


def presentation_mode(win) -> "PresentationMode":
    """The window's presentation mode (made on first use)."""
    mode = getattr(win, "presentation_mode", None)
    if mode is None:
        mode = win.presentation_mode = PresentationMode(win)
    return mode


def _arrangement(win):
    from attnviz.gui.panels.compact_layout import CompactArrangement  # (it reads this mode by attribute)

    return CompactArrangement.of(win)


def _dock_sizes(win) -> list:
    """(main window, dock, width, height) of every dock on screen: the window's panels and the views in
    front of their groups (a tabbed dock's size is its group's)."""
    area = win.views_area
    got = [(win, d) for d in win.docks.values() if d.isVisible() and not d.isFloating()]
    got += [(area, d) for n, d in area.docks.items() if area.on_screen(n) and not d.isFloating()]
    return [(owner, d, d.width(), d.height()) for owner, d in got]


def _resize_docks(win, sizes) -> None:
    """Give the docks recorded by :func:`_dock_sizes` their sizes back (docks since closed are skipped)."""
    for owner in (win, win.views_area):
        mine = [(d, w, h) for o, d, w, h in sizes or () if o is owner and shiboken6.isValid(d) and d.isVisible()]
        if mine:
            docks = [d for d, _, _ in mine]
            owner.resizeDocks(docks, [w for _, w, _ in mine], Qt.Orientation.Horizontal)
            owner.resizeDocks(docks, [h for _, _, h in mine], Qt.Orientation.Vertical)


class _DockSizesAfterResize(QObject):
    """For ``SECONDS`` after leaving presentation: every resize of the window or of its views' dock area
    re-applies the recorded dock sizes (after the layout pass that resize starts), then it removes itself."""

    SECONDS = 3.0

    def __init__(self, win, sizes):
        super().__init__(win)
        self._win, self._sizes = win, sizes
        self._watched = [win, win.views_area]  # the views' own dock area is resized after the window
        for w in self._watched:
            w.installEventFilter(self)
        QTimer.singleShot(int(self.SECONDS * 1000), self, self._done)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize and any(obj is w for w in self._watched):
            # the timer's function holds this object weakly: a pending call whose context is deleted with the
            # window stays referenced by PySide, and a lambda holding the window kept every view's Python
            # object (and their parentless menus) alive after the window was gone
            me = weakref.ref(self)
            QTimer.singleShot(0, self, lambda: (obj := me()) is not None and obj._reapply())
        return False

    def _reapply(self) -> None:
        if not self._win.isFullScreen():
            _resize_docks(self._win, self._sizes)

    def _done(self) -> None:
        for w in self._watched:
            if shiboken6.isValid(w):
                w.removeEventFilter(self)
        self.deleteLater()


def enter_presentation(win, widget: QWidget | None = None) -> None:
    """Show ``widget`` (or the current figure) alone, full screen, in the presentation style."""
    presentation_mode(win).enter(widget)


def leave_presentation(win) -> None:
    """Back to the window as it was before :func:`enter_presentation`."""
    presentation_mode(win).leave()


class PresentationMode(QObject):
    """Figure-first presentation for a :class:`~attnviz.gui.window.main_window.MainWindow`.

    Everything it hides or changes is recorded on entering and restored on leaving, so the window's
    own layout (docks, the attention views' arrangement, full screen or not) comes back untouched.
    """

    changed = Signal(bool)

    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.active = False
        self.figure: QWidget | None = None
        self._hidden: list[QWidget] = []
        self._views_front: list[QWidget] = []  # the views' docks in front of their tab groups
        self._pinned = None  # the compact layout's pinned view before presenting (a folded figure pins itself)
        self._dock_sizes = None  # (owner, dock, width, height) of the docks on screen before presenting
        self._was_full_screen = False
        self._was_maximized = False
        self._figure_hidden: list[QWidget] = []  # hidden for the current figure (other docks, sub-tab bar)
        self._controls_hidden = None  # the walkthrough widget whose controls are hidden
        self._bare_dock = None  # the presented view's dock, its title bar hidden
        self._group_titles = []  # (group box, its sheet before) enlarged for the figure
        self._figure_shortcuts: list[QShortcut] = []  # Alt+arrows for a figure with its own selection
        self._disabled_actions = []  # the window's layer/head actions, off meanwhile
        self._shortcuts = []
        self._geometry = None  # the window's geometry before presenting
        self._hint_label: PresentationHint | None = None
        for key, slot in ((Qt.Key.Key_Escape, self.leave), (Qt.Key.Key_PageDown, lambda: self.step(1)),
                          (Qt.Key.Key_PageUp, lambda: self.step(-1))):
            sc = QShortcut(QKeySequence(key), win)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.setEnabled(False)  # only while presenting: Esc and Page keys keep their usual jobs otherwise
            sc.activated.connect(slot)
            self._shortcuts.append(sc)
        win.tabs.currentChanged.connect(self._tab_changed)

    # -- public ------------------------------------------------------------------------------------
    def toggle(self, on: bool | None = None) -> None:
        """F5: enter with the current figure, or leave."""
        on = not self.active if on is None else bool(on)
        self.enter() if on else self.leave()

    def enter(self, widget: QWidget | None = None) -> None:
        """Present ``widget`` (default: the current figure). Entering again switches the figure."""
        win = self.win
        if not self.active:
            self._was_full_screen, self._was_maximized = win.isFullScreen(), win.isMaximized()
            self._geometry = win.geometry()  # size and place: showNormal alone does not bring them back
            area = win.views_area
            self._views_front = [d for n, d in area.docks.items() if area.on_screen(n)]
            self._dock_sizes = _dock_sizes(win)
            self._pinned = _arrangement(win).pinned
            win.set_presentation(True)  # large type and thick lines in every view and panel
            chrome = [d for d in win.docks.values()] + [win.menuBar(), win.statusBar(), win.tabs.tabBar(),
                                                        win.part_bar]
            self._hide(chrome)
            self.active = True
            for sc in self._shortcuts:
                sc.setEnabled(True)
            if not win.isFullScreen():
                win.showFullScreen()
            self._present(widget)
            # Page Down is offered only where there are steps (a head map has none)
            self._flash(leave_text(self.figure))
        else:
            self._present(widget)
        self._sync_action(True)
        self.changed.emit(True)

    def leave(self) -> None:
        """Put back everything :meth:`enter` changed."""
        if not self.active:
            self._sync_action(False)
            return
        win = self.win
        self._restore_figure()
        for w in self._hidden:
            if shiboken6.isValid(w):
                w.show()
        self._hidden = []
        # Presenting only hid docks (shown again above) and picked a front tab: bring back the tabs that
        # were in front. Not QMainWindow.restoreState: it builds new tab bars for the tabbed docks and
        # leaves the old ones shown, two more bars drawn over the views each time.
        for dock in self._views_front:
            if shiboken6.isValid(dock):
                dock.raise_()
        self._views_front = []
        # presenting a view a compact window had folded brought it forward as if asked for from the Views
        # menu (pinned): the compact layout then put it in front again once the window was back at its size
        _arrangement(win).pinned = self._pinned
        self.active = False
        for sc in self._shortcuts:
            sc.setEnabled(False)
        if self._hint_label is not None and shiboken6.isValid(self._hint_label):
            self._hint_label.hide()
        win.set_presentation(False)  # also clears a large-type setting left by a session that quit presenting
        if not self._was_full_screen:
            win.showMaximized() if self._was_maximized else win.showNormal()
            if not self._was_maximized and self._geometry is not None:
                # after the normal type is back (its layout pass resized the window), and once more a turn
                # later: leaving full screen is asynchronous on some platforms and lands after this call
                # the rectangle itself, not restoreGeometry: that keeps room for a title bar above a window
                # at the top of the screen, and without a window manager (Xvfb, no frame) it came back 25 px lower
                geometry = self._geometry
                win.setGeometry(geometry)
                QTimer.singleShot(0, win, lambda: win.isFullScreen() or win.setGeometry(geometry))
        # hiding the docks and reparenting the figure let Qt re-split the dock areas (786 | 644 px became
        # 1069 | 359 px): give each dock the size it had, now and once the window is back at its size
        sizes, self._dock_sizes = self._dock_sizes, None
        _resize_docks(win, sizes)
        QTimer.singleShot(0, win, lambda: win.isFullScreen() or _resize_docks(win, sizes))
        # the window's own resize can land later still (a busy machine: the split drifted 55 px after both):
        # each resize of the next seconds gives the docks their sizes again once its layout pass has run
        _DockSizesAfterResize(win, sizes)
        self._sync_action(False)
        self.changed.emit(False)

    def step(self, delta: int) -> None:
        """Next/previous step of a step-by-step figure, or scene of a lesson (the clicker's Page Down /
        Page Up): a figure with ``step_by(delta)`` steps itself."""
        fig = self.figure
        if fig is None or not shiboken6.isValid(fig):
            return
        before = step_position(fig)
        if hasattr(fig, "step_by"):
            fig.step_by(delta)
        elif hasattr(fig, "set_step") and before is not None:
            fig.set_step(before[0] + delta)
        after = step_position(fig)
        if before is not None and after is not None and after[0] == before[0]:
            self._flash(end_text(fig, delta))  # a clicker at either end would otherwise stop without a word

    def _route_selection_keys(self, fig) -> None:
        """A figure with a selection of its own (a lesson's scene, ``step_selection(field, delta)``) takes
        the window's layer/head keys (Alt+arrows) while it is presented: the window's actions step
        aside, since two shortcuts on one key would both stay silent."""
        acts = getattr(self.win, "actions_", {})
        for name, field, delta in SELECTION_KEYS:
            act = acts.get(name)
            if act is None or act.shortcut().isEmpty():
                continue
            sc = QShortcut(act.shortcut(), self.win)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(lambda f=field, d=delta: fig.step_selection(f, d))
            if act.isEnabled():
                act.setEnabled(False)
                self._disabled_actions.append(act)
            self._figure_shortcuts.append(sc)

    def _flash(self, text: str) -> None:
        """The hint for its seconds: in the figure's own strip where it keeps one (a lesson's footer line: over a
        scene the hint covered the title of a figure that arrived after it was placed), else over the window
        where nothing is drawn."""
        fig = self.figure
        if fig is not None and shiboken6.isValid(fig) and hasattr(fig, "show_hint"):
            fig.show_hint(text)
        else:
            self._hint().flash(text)

    def _hint(self) -> PresentationHint:
        if self._hint_label is None or not shiboken6.isValid(self._hint_label):
            self._hint_label = PresentationHint(self.win)
        return self._hint_label

    # -- what is shown -----------------------------------------------------------------------------
    def _present(self, widget: QWidget | None) -> None:
        win = self.win
        self._restore_figure()
        if widget is not None:
            self._show_page_of(widget)
        fig = widget or win.current_figure()
        if fig is not None and fig is getattr(win, "training_page", None) and getattr(win, "training", None):
            fig = win.training  # the page is a holder: the panel knows which of its parts are the figure
        self.figure = fig
        if fig is None:
            return
        area = win.views_area
        if fig in area.views:  # one dock: the others step aside, this one takes the whole area
            target = next((d for d in area.docks.values() if d.widget() is fig), None)
            for dock in area.docks.values():
                if dock is not target and not dock.isHidden():
                    dock.hide()
                    self._figure_hidden.append(dock)
            if target is not None:
                target.show()
                target.raise_()
                if target.titleBarWidget() is None:  # no "Head map ▫ ✕" strip above a slide
                    target.setTitleBarWidget(QWidget(target))
                    self._bare_dock = target
        page = getattr(win, "walkthrough", None)
        if page is not None and (fig is page or page.isAncestorOf(fig)):
            bar = page.tabBar()
            if not bar.isHidden():
                bar.hide()
                self._figure_hidden.append(bar)
        style = getattr(win.pages, "view_style", None)
        if style is not None:
            self._group_titles = enlarge_group_titles(fig, style)
        if hasattr(fig, "set_controls_visible"):  # walkthrough widgets, the training panel
            fig.set_controls_visible(False)
            self._controls_hidden = fig
        if hasattr(fig, "step_selection"):
            self._route_selection_keys(fig)

    def _restore_figure(self) -> None:
        if self._bare_dock is not None and shiboken6.isValid(self._bare_dock):
            bar = self._bare_dock.titleBarWidget()
            self._bare_dock.setTitleBarWidget(None)  # the dock's own title bar again
            if bar is not None:
                bar.deleteLater()
        self._bare_dock = None
        for w in self._figure_hidden:
            if shiboken6.isValid(w):
                w.show()
        self._figure_hidden = []
        restore_group_titles(self._group_titles)
        self._group_titles = []
        if self._controls_hidden is not None and shiboken6.isValid(self._controls_hidden):
            self._controls_hidden.set_controls_visible(True)
        self._controls_hidden = None
        for sc in self._figure_shortcuts:
            sc.setEnabled(False)
            sc.deleteLater()
        self._figure_shortcuts = []
        for act in self._disabled_actions:
            if shiboken6.isValid(act):
                act.setEnabled(True)
        self._disabled_actions = []

    def _show_page_of(self, widget: QWidget) -> None:
        """Bring the tab (and walkthrough sub-tab) holding ``widget`` to the front."""
        win = self.win
        for i in range(win.tabs.count()):
            page = win.tabs.widget(i)
            if page is widget or page.isAncestorOf(widget):
                win.tabs.setCurrentIndex(i)
                break
        wt = getattr(win, "walkthrough", None)
        if wt is not None and wt.isAncestorOf(widget):
            for i in range(wt.count()):
                if wt.widget(i) is widget or wt.widget(i).isAncestorOf(widget):
                    wt.setCurrentIndex(i)

    def _hide(self, widgets) -> None:
        for w in widgets:
            if w is not None and not w.isHidden():
                w.hide()
                self._hidden.append(w)

    def _tab_changed(self, _index: int) -> None:
        if self.active:  # Ctrl+1/2/3 while presenting: the new page's figure, figure first too
            self._present(None)

    def _sync_action(self, on: bool) -> None:
        act = getattr(self.win, "actions_", {}).get("presentation")
        if act is not None and act.isChecked() != on:
            act.blockSignals(True)
            act.setChecked(on)
            act.blockSignals(False)
