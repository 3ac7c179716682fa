"""Figure titles that take only the height of their text (a plain LabelItem grows with the layout)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QSizePolicy

from attnviz.gui.style import ViewStyle

__all__ = ["make_title", "set_title"]


def make_title() -> pg.LabelItem:
    """A centred LabelItem whose height is fixed to its text."""
    item = pg.LabelItem("", justify="center")
    item.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    return item


def set_title(item: pg.LabelItem, text: str, style: ViewStyle, factor: float = 1.2) -> None:
    """Set the title text in the style's foreground colour at ``factor`` × the base font size."""
    item.setText(text, color=style.foreground, size=f"{style.font_pt(factor):.1f}pt")
