"""Which view the user last clicked: the figure F5 and File ▸ Export mean when several views are on screen.

A click does not always leave the keyboard focus in the clicked view (a40: after a click in the All heads grid
beside the Head map, F5 presented the Head map), so the window also watches mouse presses, through one
application-wide event filter that only compares the pressed widget with the views it was given."""

from __future__ import annotations

import weakref

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

__all__ = ["LastPressed"]


class LastPressed(QObject):
    """``views()`` (a callable) lists the views to watch; :meth:`view` is the one last pressed, or None."""

    def __init__(self, views, parent=None):
        super().__init__(parent)
        self._views = views
        self._last = None  # weakref to the view
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.MouseButtonPress and isinstance(obj, QWidget):
            for view in self._views():
                if view is obj or view.isAncestorOf(obj):
                    self._last = weakref.ref(view)
                    break
        return False

    def view(self):
        return self._last() if self._last is not None else None
