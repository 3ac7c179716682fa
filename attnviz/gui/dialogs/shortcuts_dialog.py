"""Help ▸ Keyboard shortcuts: every key of the window, read from its actions, as this platform spells them."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout

__all__ = ["ShortcutsDialog", "shortcut_rows"]


def shortcut_rows(actions: dict) -> list[tuple[str, str]]:
    """(what it does, keys) for every action with a shortcut, in menu order; keys in native text
    (``Ctrl+O`` here, ``⌘O`` on macOS), alternatives joined with " or "."""
    rows = []
    for act in actions.values():
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts() if not k.isEmpty()]
        if keys:
            rows.append((act.text().replace("&", "").rstrip("…").strip(), " or ".join(keys)))
    return rows + PRESENTING_KEYS


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
        self.resize(460, min(640, 80 + 30 * len(rows)))
