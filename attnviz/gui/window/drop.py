"""Dropping files on the main window: a scene opens it, a model folder loads it, an image runs a vision
model on it. The window's ``dragEnterEvent`` / ``dropEvent`` hand their events here."""

from __future__ import annotations

from pathlib import Path

__all__ = ["accept_drag", "handle_drop"]


def accept_drag(event) -> None:
    """Files may be dropped (what they are is decided on the drop)."""
    if event.mimeData().hasUrls():
        event.acceptProposedAction()


def handle_drop(win, event) -> None:
    """Open what was dropped on ``win`` (uses its ``load_model``, ``loaded``, ``input_panel``, ``notify``)."""
    urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
    if not urls:
        return
    path = Path(urls[0].toLocalFile())
    from attnviz.lessons.scene import is_scene_file

    if is_scene_file(path):
        from attnviz.gui.window.scene_actions import open_scene

        open_scene(win, str(path))
    elif path.is_dir():
        win.load_model(str(path))
    elif win.loaded is not None and win.loaded.config.kind == "vit":
        win.input_panel.image.submit(str(path))
    else:
        win.notify("drop a model folder, or an image when a vision model is loaded", "warning")
    event.acceptProposedAction()
