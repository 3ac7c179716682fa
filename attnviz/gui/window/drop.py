"""Dropping files on the main window: a model folder loads it, an image runs a vision model on it."""

from __future__ import annotations

from pathlib import Path

__all__ = ["WindowDropMixin"]


class WindowDropMixin:
    """Drag-and-drop handlers for MainWindow (uses its ``load_model``, ``loaded``, ``input_panel``, ``notify``)."""

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if not urls:
            return
        path = Path(urls[0].toLocalFile())
        from attnviz.lessons.scene import is_scene_file

        if is_scene_file(path):
            from attnviz.gui.window.scene_actions import open_scene

            open_scene(self, str(path))
        elif path.is_dir():
            self.load_model(str(path))
        elif self.loaded is not None and self.loaded.config.kind == "vit":
            self.input_panel.image.submit(str(path))
        else:
            self.notify("drop a model folder, or an image when a vision model is loaded", "warning")
        event.acceptProposedAction()
