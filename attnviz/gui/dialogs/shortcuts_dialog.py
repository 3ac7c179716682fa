"""Help ▸ Keyboard shortcuts: every key of the window, read from its actions, as this platform spells them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout

__all__ = ["ShortcutsDialog", "shortcut_rows"]


def shortcut_rows(actions: dict) -> list[tuple[str, str]]:
    """(what it does, keys) for every action with a shortcut, in menu order; keys in native text
    (``Ctrl+O`` here, ``⌘O`` on macOS), alternatives joined with " or ". A platform's standard keys include
    the dedicated keys of some keyboards (Open, Save, Help), listed as bare words ("Ctrl+O or Open") that read as
    another action: they are left out of the list (they still work)."""
    rows = []
    for act in actions.values():
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts()
                if not k.isEmpty() and not _dedicated_key(k)]
        if keys:
            rows.append((act.text().replace("&", "").rstrip("…").strip(), " or ".join(keys)))
    return rows + PRESENTING_KEYS


def _dedicated_key(seq: QKeySequence) -> bool:
    """A key of its own on some keyboards (Help, Open, media keys), pressed without a modifier."""
    combo = seq[0]
    code = combo.key().value
    return combo.keyboardModifiers() == Qt.KeyboardModifier.NoModifier and (
        code == Qt.Key.Key_Help.value or code >= Qt.Key.Key_Back.value)


# keys that presentation mode and lessons read directly (a clicker's keys), not through a menu action
PRESENTING_KEYS = [("Presenting: next / previous step, part or lesson scene", "Page Down / Page Up")]


class ShortcutsDialog(QDialog):
    """A two-column table: action, keys. Built from the live actions, so it cannot drift from them."""

    def __init__(self, actions: dict, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(actions)
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        for i, (what, keys) in enumerate(rows):
            self.table.setItem(i, 0, QTableWidgetItem(what))
            self.table.setItem(i, 1, QTableWidgetItem(keys))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(buttons)
        self._buttons = buttons
        self.resize(460, self._height_for_every_row())

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name): rows measured in the font it is shown in
        self.resize(self.width(), self._height_for_every_row())
        super().showEvent(event)

    def _height_for_every_row(self) -> int:
        """Tall enough for every row (the last, Page Down / Page Up, fell below a fixed 640 px), within the
        screen's available height (then the table scrolls)."""
        self.table.resizeRowsToContents()
        margins = self.layout().contentsMargins()
        table = (self.table.horizontalHeader().sizeHint().height() + self.table.verticalHeader().length()
                 + 2 * self.table.frameWidth() + 2)
        want = table + self._buttons.sizeHint().height() + self.layout().spacing() + margins.top() + margins.bottom()
        screen = self.screen() or (self.parent().screen() if self.parent() is not None else None)
        room = screen.availableGeometry().height() - 60 if screen is not None else want
        return max(200, min(want, room))
