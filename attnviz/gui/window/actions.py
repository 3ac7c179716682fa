"""Menus, shortcuts and tooltips of the main window (everything is reachable from the keyboard)."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence

from attnviz.gui.panels.presentation import presentation_mode
from attnviz.gui.settings import THEME_CHOICES

__all__ = ["build_actions", "follow_system_scheme", "COLORMAPS", "SHORTCUTS", "STANDARD_KEYS", "fill_panels_menu", "panel_actions",
           "reset_layout"]

# perceptually uniform maps first; viridis (default) and cividis are colour-blind safe
COLORMAPS = ("viridis", "cividis", "inferno", "magma", "plasma", "CET-L1")

SHORTCUTS = {
    "open_model": "Ctrl+O",
    "open_image": "Ctrl+Shift+O",
    "export": "Ctrl+E",
    "quit": "Ctrl+Q",
    "next_layer": "Alt+Down",
    "prev_layer": "Alt+Up",
    "next_head": "Alt+Right",
    "prev_head": "Alt+Left",
    "step": "Ctrl+Return",
    "pin": "Ctrl+P",
    "presentation": "F5",
    "full_screen": "F11",
    "tab_attention": "Ctrl+1",
    "tab_training": "Ctrl+2",
    "tab_walkthrough": "Ctrl+3",
    "shortcuts": "F1",
}

# the platform's own keys where one exists (macOS ⌘O, ⌘Q, ⌃⌘F …); SHORTCUTS is the fallback where the
# platform defines none (e.g. Quit on Windows)
STANDARD_KEYS = {
    "open_model": QKeySequence.StandardKey.Open,
    "quit": QKeySequence.StandardKey.Quit,
    "full_screen": QKeySequence.StandardKey.FullScreen,
    "shortcuts": QKeySequence.StandardKey.HelpContents,
}
THEME_LABELS = {"system": "Follow system", "light": "Light", "dark": "Dark"}


def _text_file_mb() -> int:
    from attnviz.text.text_file import MAX_TEXT_FILE_BYTES  # light: os, pathlib and the errors

    return MAX_TEXT_FILE_BYTES // (1024 * 1024)


def _action(win, text: str, slot, key: str | None = None, tip: str = "", checkable: bool = False) -> QAction:
    act = QAction(text, win)
    standard = QKeySequence.keyBindings(STANDARD_KEYS[key]) if key in STANDARD_KEYS else []
    if standard:
        act.setShortcuts(standard)
    elif key:
        act.setShortcut(QKeySequence(SHORTCUTS.get(key, key)))
    shown = f"{tip} ({act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})" if key else tip
    act.setToolTip(shown or text)
    act.setStatusTip(tip or text)
    act.setCheckable(checkable)
    act.triggered.connect(slot)
    win.addAction(act)  # shortcuts work even when the menu bar is hidden (full screen)
    return act


def build_actions(win) -> dict[str, QAction]:
    """Create the File / View / Help menus of ``win`` (a MainWindow) and return the actions by name."""
    acts: dict[str, QAction] = {}
    bar = win.menuBar()

    file_menu = bar.addMenu("&File")
    acts["open_model"] = _action(win, "Open &model folder…", win.open_model_dialog, "open_model",
                                 "Load a model directory (config.json + model.safetensors)")
    acts["open_text"] = _action(win, "Open &text…", win.input_panel.open_text_dialog, None,
                                f"Run the model on the whole text of a UTF-8 file of at most {_text_file_mb()} MB "
                                "(a long document)")
    acts["open_image"] = _action(win, "Open &image…", win.input_panel.open_image_dialog, "open_image",
                                 "Give an image to the vision model")
    acts["export"] = _action(win, "&Export figure…", win.export_figure, "export",
                             "Export the current view as PNG, SVG or PDF")
    acts["copy_figure"] = _action(win, "&Copy figure", win.copy_figure, None,
                                  "Copy the current view to the clipboard as a 1920×1080 slide image")
    acts["copy_figure"].setShortcut("Ctrl+Shift+C")
    acts["quit"] = _action(win, "&Quit", win.close, "quit", "Close attnviz")
    for name in ("open_model", "open_text", "open_image"):
        file_menu.addAction(acts[name])
    recent = file_menu.addMenu("Recent models")
    recent.aboutToShow.connect(lambda: _fill_recent(win, recent, "models", win.load_model))
    images = file_menu.addMenu("Recent images")
    images.aboutToShow.connect(lambda: _fill_recent(win, images, "images", win.input_panel.image.submit))
    file_menu.addSeparator()
    file_menu.addAction(acts["export"])
    file_menu.addAction(acts["copy_figure"])
    file_menu.addSeparator()
    file_menu.addAction(acts["quit"])

    view_menu = bar.addMenu("&View")
    for name, text, field, delta, tip in (
            ("next_layer", "Next layer", "layer", 1, "Show the next layer in every view"),
            ("prev_layer", "Previous layer", "layer", -1, "Show the previous layer in every view"),
            ("next_head", "Next head", "head", 1, "Show the next head in every view"),
            ("prev_head", "Previous head", "head", -1, "Show the previous head in every view")):
        acts[name] = _action(win, text, lambda _=False, f=field, d=delta: win.step_selection(f, d), name, tip)
        view_menu.addAction(acts[name])
    acts["step"] = _action(win, "Step (append next token)", lambda: win.prediction_panel.step(), "step",
                           "Decoders: append the chosen next token and run again")
    view_menu.addAction(acts["step"])
    view_menu.addSeparator()
    acts["pin"] = _action(win, "Pin this trace for Compare", win.compare_pin.pin, "pin",
                          "Keep the trace on screen: the Compare view draws it beside the current one, and their "
                          "difference (another input, or another model of the same shape)")
    acts["unpin"] = _action(win, "Unpin", win.compare_pin.unpin, None, "Let the pinned trace go")
    view_menu.addAction(acts["pin"])
    view_menu.addAction(acts["unpin"])
    view_menu.addSeparator()
    cmap_menu = view_menu.addMenu("Colour map")
    group = QActionGroup(win)
    for name in COLORMAPS:
        act = QAction(name, win, checkable=True)
        act.setChecked(name == win.settings.colormap)
        act.triggered.connect(lambda _=False, n=name: win.set_colormap(n))
        group.addAction(act)
        cmap_menu.addAction(act)
        acts[f"cmap_{name}"] = act
    theme_menu = view_menu.addMenu("Theme")
    tgroup = QActionGroup(win)
    for theme in THEME_CHOICES:
        act = QAction(THEME_LABELS[theme], win, checkable=True)
        act.setChecked(theme == win.settings.theme_choice)
        act.triggered.connect(lambda _=False, t=theme: win.set_theme(t))
        tgroup.addAction(act)
        theme_menu.addAction(act)
        acts[f"theme_{theme}"] = act
    acts["presentation"] = _action(win, "Presentation mode", lambda on: presentation_mode(win).toggle(on),
                                   "presentation", "The current figure alone, full screen, in large type "
                                   "(Esc to leave)", checkable=True)
    acts["full_screen"] = _action(win, "Full screen", win.toggle_full_screen, "full_screen",
                                  "Use the whole screen", checkable=True)
    view_menu.addAction(acts["presentation"])
    view_menu.addAction(acts["full_screen"])
    view_menu.addSeparator()
    for i, (key, label, tip) in enumerate((
            ("tab_attention", "Attention", "Attention of the current input"),
            ("tab_training", "Training", "Train a model on a built-in task and replay its attention"),
            ("tab_walkthrough", "Walkthrough", "Self-attention step by step"))):
        acts[key] = _action(win, f"Go to {label}", lambda _=False, i=i: win.tabs.setCurrentIndex(i), key, tip)
        win.tabs.setTabToolTip(i, acts[key].toolTip())
        view_menu.addAction(acts[key])
    panels = view_menu.addMenu("Panels")
    acts["reset_layout"] = _action(win, "Reset layout", lambda: reset_layout(win), None,
                                   "Every panel and view back in its first-start place")
    panels.aboutToShow.connect(lambda: fill_panels_menu(win, panels, acts["reset_layout"]))
    fill_panels_menu(win, panels, acts["reset_layout"])

    help_menu = bar.addMenu("&Help")
    acts["shortcuts"] = _action(win, "&Keyboard shortcuts", lambda: _show_shortcuts(win), "shortcuts",
                                "Every key of the window, as this platform spells it")
    help_menu.addAction(acts["shortcuts"])
    acts["about"] = _action(win, "&About attnviz", win.show_about, None, "Versions and the compute device")
    help_menu.addAction(acts["about"])
    return acts


class _SchemeFollower(QObject):
    """While the theme follows the system, re-theme the window when the desktop switches light ↔ dark.

    A child of the window: Qt drops the connection to the application-wide hints when it goes.
    """

    def __init__(self, win):
        super().__init__(win)
        self._win = win
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):  # Qt ≥ 6.5
            hints.colorSchemeChanged.connect(self.scheme_changed)

    def scheme_changed(self, _scheme=None) -> None:
        if self._win.settings.theme_choice == "system":
            self._win.set_theme("system")


def follow_system_scheme(win) -> QObject:
    """The window's follower of the desktop's light/dark switch (the window keeps it)."""
    return _SchemeFollower(win)


def _show_shortcuts(win) -> None:
    from attnviz.gui.dialogs.shortcuts_dialog import ShortcutsDialog

    ShortcutsDialog(win.actions_, win).exec()


def fill_panels_menu(win, menu, reset: QAction) -> None:
    """View ▸ Panels: the window's panels, then every attention view (closed ones come back from
    here), then Reset layout. Filled when opened: the views are installed after the menus are built."""
    menu.clear()
    for dock in win.docks.values():
        menu.addAction(dock.toggleViewAction())
    docks = list(win.views_area.docks.values())
    if docks:
        menu.addSeparator()
        for dock in docks:
            menu.addAction(dock.toggleViewAction())
    menu.addSeparator()
    menu.addAction(reset)


def panel_actions(win) -> list[QAction]:
    """What View ▸ Panels lists (tests and the keyboard-shortcut help read it)."""
    return [d.toggleViewAction() for d in win.docks.values()] + \
        [d.toggleViewAction() for d in win.views_area.docks.values()]


def reset_layout(win) -> None:
    """Every panel and view docked and shown where it is on first start; presentation mode ends."""
    from PySide6.QtCore import Qt

    presentation_mode(win).leave()
    areas = {"ModelDock": Qt.DockWidgetArea.LeftDockWidgetArea, "InputDock": Qt.DockWidgetArea.TopDockWidgetArea,
             "PredictionDock": Qt.DockWidgetArea.LeftDockWidgetArea}
    for name, dock in win.docks.items():
        dock.setFloating(False)
        win.removeDockWidget(dock)
        win.addDockWidget(areas.get(name, Qt.DockWidgetArea.LeftDockWidgetArea), dock)
        dock.show()
    if "ModelDock" in win.docks and "PredictionDock" in win.docks:
        win.splitDockWidget(win.docks["ModelDock"], win.docks["PredictionDock"], Qt.Orientation.Vertical)
        win.resizeDocks([win.docks["ModelDock"]], [400], Qt.Orientation.Horizontal)
    win.views_area.reset_layout()
    win.statusBar().showMessage("layout reset", 3000)


def _fill_recent(win, menu, kind: str, open_it) -> None:
    """Fill a File → Recent submenu with ``settings.recent(kind)``; choosing one calls ``open_it(path)``."""
    menu.clear()
    paths = win.settings.recent(kind)
    for p in paths:
        act = menu.addAction(p)
        act.triggered.connect(lambda _=False, p=p: open_it(p))
    if not paths:
        menu.addAction("(none yet)").setEnabled(False)
