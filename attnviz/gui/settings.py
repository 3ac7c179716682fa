"""What the app remembers between sessions: window layout, last model, colour map, theme, recent files.

Stored with QSettings in an INI file. ``ATTNVIZ_SETTINGS`` names another file, so tests (and a
lecturer's USB stick) never touch the user's real settings.
"""

from __future__ import annotations

import json
import os

from PySide6.QtCore import QByteArray, QSettings

__all__ = ["AppSettings", "settings_path", "system_theme", "RECENT_LIMIT", "DEFAULT_COLORMAP", "THEMES",
           "THEME_CHOICES"]

RECENT_LIMIT = 8
DEFAULT_COLORMAP = "viridis"  # perceptually uniform and colour-blind safe
THEMES = ("light", "dark")  # what the palette and the views are drawn in
THEME_CHOICES = ("system", "light", "dark")  # what the View ▸ Theme menu offers; "system" by default


def system_theme() -> str:
    """"dark" when the desktop asks for a dark colour scheme (Qt ≥ 6.5 reads it), else "light"."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    hints = app.styleHints() if app is not None else None
    scheme = getattr(hints, "colorScheme", None)
    return "dark" if scheme is not None and scheme() == Qt.ColorScheme.Dark else "light"


def settings_path() -> str | None:
    """The INI file named by ``ATTNVIZ_SETTINGS``, or None for the platform's per-user location."""
    return os.environ.get("ATTNVIZ_SETTINGS") or None


class AppSettings:
    """Typed access to the persisted settings.

    Parameters
    ----------
    path : str, optional
        INI file to use; default: ``ATTNVIZ_SETTINGS`` or the per-user attnviz settings file.
    """

    def __init__(self, path: str | None = None):
        path = path or settings_path()
        if path:
            self._qs = QSettings(path, QSettings.Format.IniFormat)
        else:
            self._qs = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "attnviz", "attnviz")

    @property
    def file_name(self) -> str:
        return self._qs.fileName()

    def sync(self) -> None:
        self._qs.sync()

    # -- plain values ----------------------------------------------------------------------------
    def _str(self, key: str, default: str) -> str:
        value = self._qs.value(key, default)
        return str(value) if value is not None else default

    def _set(self, key: str, value) -> None:
        self._qs.setValue(key, value)

    @property
    def last_model(self) -> str:
        return self._str("model/last", "")

    @last_model.setter
    def last_model(self, value: str) -> None:
        self._set("model/last", value)

    @property
    def kept_selections(self) -> dict:
        """Where each model was left (model → layer, head, part), so a relaunch opens the head it showed.
        Untrusted text: :meth:`attnviz.selection.Selection.restore_kept` validates it."""
        try:
            value = json.loads(self._str("model/selections", "{}"))
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}

    @kept_selections.setter
    def kept_selections(self, value: dict) -> None:
        self._set("model/selections", json.dumps(value))

    @property
    def device(self) -> str:
        return self._str("model/device", "auto")

    @device.setter
    def device(self, value: str) -> None:
        self._set("model/device", value)

    @property
    def colormap(self) -> str:
        return self._str("view/colormap", DEFAULT_COLORMAP)

    @colormap.setter
    def colormap(self, value: str) -> None:
        self._set("view/colormap", value)

    @property
    def theme(self) -> str:
        """The theme in effect, "light" or "dark": the chosen one, or the system's when following it."""
        choice = self.theme_choice
        return system_theme() if choice == "system" else choice

    @theme.setter
    def theme(self, value: str) -> None:
        """Choose "system", "light" or "dark" (anything else: "system")."""
        self._set("view/theme", value if value in THEME_CHOICES else "system")

    @property
    def theme_choice(self) -> str:
        """What the user chose in View ▸ Theme: "system" (the default), "light" or "dark"."""
        value = self._str("view/theme", "system")
        return value if value in THEME_CHOICES else "system"

    @property
    def presentation(self) -> bool:
        # INI files give back strings: compare the text rather than trusting bool("false")
        return str(self._qs.value("view/presentation", "false")).lower() in ("true", "1")

    @presentation.setter
    def presentation(self, value: bool) -> None:
        self._set("view/presentation", "true" if value else "false")

    # -- window layout ---------------------------------------------------------------------------
    def layout(self, name: str) -> QByteArray | None:
        """A saved ``saveGeometry``/``saveState`` blob, or None."""
        value = self._qs.value(f"window/{name}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_layout(self, name: str, blob: QByteArray) -> None:
        self._set(f"window/{name}", blob)

    # -- recent lists ----------------------------------------------------------------------------
    def recent(self, kind: str) -> list[str]:
        """Recently opened model directories (``kind="models"``) or images (``"images"``), newest first."""
        raw = self._qs.value(f"recent/{kind}", "[]")
        try:
            items = json.loads(str(raw))
        except json.JSONDecodeError:
            return []
        return [str(i) for i in items if isinstance(i, str)][:RECENT_LIMIT]

    def add_recent(self, kind: str, path: str) -> list[str]:
        items = [path] + [p for p in self.recent(kind) if p != path]
        items = items[:RECENT_LIMIT]
        # JSON text: INI lists of one element come back as a plain string
        self._set(f"recent/{kind}", json.dumps(items))
        return items

    def clear_recent(self, kind: str) -> None:
        self._set(f"recent/{kind}", "[]")
