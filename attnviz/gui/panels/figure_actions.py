"""File ▸ Export figure… and Copy figure: which view is "the current figure", and handing it to export."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from attnviz.errors import AttnvizError

__all__ = ["current_figure", "export_figure", "copy_figure"]


def current_figure(win):
    """The walkthrough's sub-tab, else the view holding the focus (or the first one on screen) in the
    Attention tab; the training tab exports its page."""
    page = win.tabs.currentWidget()
    if page is win.walkthrough_page and win.walkthrough is not None:
        return win.walkthrough.current_view()
    if page is win.views_area:
        shown = win.views_area.visible_views()
        focus = QApplication.focusWidget()
        for view in shown:
            if focus is not None and (focus is view or view.isAncestorOf(focus)):
                return view
        return shown[0] if shown else None
    return page


def export_figure(win) -> None:
    from attnviz.gui.dialogs.export_dialog import ExportDialog, export_current_view

    view = win.current_figure()
    if view is None:
        win.notify("nothing to export yet: load a model and an input", "info")
        return
    name = f"{type(view).__name__.removesuffix('View').removesuffix('Widget').lower()}.png"
    dialog = ExportDialog(name, parent=win, cmap=getattr(win.view_style, "cmap", "viridis"))
    if dialog.exec() != ExportDialog.Accepted:
        return
    try:
        path = export_current_view(view, win.trace, win.selection.state, dialog.path.text(), dialog.options(),
                                   dialog.style())
    except AttnvizError as exc:
        win.notify(str(exc), "error")
        return
    win.notify(f"exported {path}", "info")


def copy_figure(win) -> None:
    from attnviz.gui.dialogs.export_dialog import copy_current_view

    view = win.current_figure()
    if view is None:
        win.notify("nothing to copy yet: load a model and an input", "info")
        return
    try:
        copy_current_view(view, win.trace, win.selection.state)
    except AttnvizError as exc:
        win.notify(str(exc), "error")
        return
    win.notify("figure copied to the clipboard (1920×1080)", "info")
