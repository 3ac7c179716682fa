"""File ▸ Export figure… and Copy figure: which view is "the current figure", and handing it to the
window's :class:`~attnviz.gui.figure_export.FigureExport` (runs without freezing; the outcome is a notice)."""

from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from attnviz.errors import AttnvizError
from attnviz.gui.window.export_progress import show_export_busy, show_export_progress

__all__ = ["current_figure", "export_figure", "copy_figure", "start_export", "exporter", "figure_trace"]


def current_figure(win):
    """The walkthrough's sub-tab, else the view last clicked, or holding the focus (or the first one on screen)
    in the Attention tab; the training tab exports its page."""
    page = win.tabs.currentWidget()
    if page is win.walkthrough_page and win.walkthrough is not None:
        return win.walkthrough.current_view()
    if page is win.views_area:
        shown = win.views_area.visible_views()
        pressed = win.views_area.pressed.view()
        if pressed is not None and any(pressed is v for v in shown):  # the view last clicked, still on screen
            return pressed
        focus = QApplication.focusWidget()
        for view in shown:
            if focus is not None and (focus is view or view.isAncestorOf(focus)):
                return view
        return shown[0] if shown else None
    return page


def exporter(win):
    """The window's :class:`~attnviz.gui.figure_export.FigureExport` (made on first use), wired to its
    notices, its status bar and its Export/Copy actions (disabled while one runs)."""
    runner = win.figure_export
    if runner is None:
        from attnviz.gui.figure_export import FigureExport

        runner = FigureExport(win)
        runner.busy_changed.connect(lambda busy: _show_busy(win, busy))
        runner.progress.connect(lambda text: show_export_progress(win, text))
        runner.done.connect(lambda value: _done(win, value))
        runner.failed.connect(lambda message: win.notify(message, "error"))
        win.figure_export = runner
    return runner


def _show_busy(win, busy: bool) -> None:
    for key in ("export", "copy_figure"):
        action = getattr(win, "actions_", {}).get(key)
        if action is not None:
            action.setEnabled(not busy)
    show_export_busy(win, busy)


def _done(win, value) -> None:
    if isinstance(value, QImage):
        win.notify(f"figure copied to the clipboard ({value.width()}×{value.height()})", "info")
    else:
        win.notify(f"exported {value}", "info")


def figure_trace(win, view):
    """What the renderer draws ``view`` from: the view's own figure trace where it has one (the Compare
    view's pair of the pinned and the current trace), else the window's trace."""
    own = getattr(view, "figure_trace", None)
    return own() if callable(own) else win.trace


def start_export(win, view, path, opts, style, highlight: bool = True) -> None:
    """What the Export dialog's OK does: write ``view`` to ``path`` without freezing the window; the
    outcome is a notice (exported, or why not). ``highlight=False``: without the clicked row/column
    (:func:`attnviz.selection.without_highlight`)."""
    state = win.selection.state
    if not highlight:
        from attnviz.figures.registry import FIGURES
        from attnviz.selection import without_highlight

        name = next((n for n, spec in FIGURES.items() if type(view).__name__ == spec.cls), "")
        state = without_highlight(state, name)
    try:
        exporter(win).export(view, figure_trace(win, view), state, path, opts, style)
    except AttnvizError as exc:
        win.notify(str(exc), "error" if not exporter(win).busy else "info")


def export_figure(win) -> None:
    from attnviz.gui.dialogs.export_dialog import ExportDialog

    view = win.current_figure()
    if view is None:
        win.notify("nothing to export yet: load a model and an input", "info")
        return
    if exporter(win).busy:
        win.notify("an export is still running: wait for its notice, then try again", "info")
        return
    name = f"{type(view).__name__.removesuffix('View').removesuffix('Widget').lower()}.png"
    dialog = ExportDialog(name, parent=win, cmap=getattr(win.view_style, "cmap", "viridis"))
    if dialog.exec() != ExportDialog.Accepted:
        return
    try:
        opts, style = dialog.options(), dialog.style()
    except AttnvizError as exc:
        win.notify(str(exc), "error")
        return
    start_export(win, view, dialog.path.text(), opts, style, highlight=dialog.highlight.isChecked())


def copy_figure(win) -> None:
    view = win.current_figure()
    if view is None:
        win.notify("nothing to copy yet: load a model and an input", "info")
        return
    try:
        exporter(win).copy(view, figure_trace(win, view), win.selection.state)
    except AttnvizError as exc:
        win.notify(str(exc), "info" if exporter(win).busy else "error")
