"""The part of the view contract every figure widget shares: its selection state and its hover line."""

from __future__ import annotations

from attnviz.selection import SelectionState

__all__ = ["SelectionHoverMixin"]


class SelectionHoverMixin:
    """Needs ``self.selection`` (a Selection or None) and ``self.status`` (a QLabel: the hover line)."""

    @property
    def state(self) -> SelectionState:
        return self.selection.state if self.selection is not None else SelectionState()

    @property
    def hover_text(self) -> str:
        """What the status line says about the cell under the mouse (tests read it)."""
        return self.status.text().strip()

    def set_hover_text(self, text: str) -> None:
        self.status.setText(text or " ")
