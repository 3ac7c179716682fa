"""Figure titles that take only the height of their text (a plain LabelItem grows with the layout)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSizePolicy

from attnviz.gui.style import ViewStyle

__all__ = ["make_title", "make_caption", "set_title"]


def make_title() -> pg.LabelItem:
    """A centred LabelItem whose height is fixed to its text."""
    item = pg.LabelItem("", justify="center")
    item.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    return item


class _Caption(pg.LabelItem):
    """A LabelItem that wraps its text to the width it is given instead of claiming the text's width,
    so panels side by side get equal columns and a narrow dock wraps the caption (lines centred)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        option = self.item.document().defaultTextOption()
        option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.item.document().setDefaultTextOption(option)

    def resizeEvent(self, ev):
        width = self.rect().width()
        if width > 0 and self.item.textWidth() != width:
            self.item.setTextWidth(width)
        super().resizeEvent(ev)

    def updateMin(self):
        super().updateMin()
        # pyqtgraph makes the text width the minimum and preferred width; keep only the height
        height = self.itemRect().height()
        self.setMinimumWidth(0)
        self._sizeHint[Qt.SizeHint.MinimumSize] = (0, height)
        self._sizeHint[Qt.SizeHint.PreferredSize] = (0, height)
        self.updateGeometry()


def make_caption() -> pg.LabelItem:
    """A centred caption over one panel of a row: fixed height, no minimum width."""
    item = _Caption("", justify="center")
    item.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    return item


def set_title(item: pg.LabelItem, text: str, style: ViewStyle, factor: float = 1.2) -> None:
    """Set the title text in the style's foreground colour at ``factor`` × the base font size."""
    item.setText(text, color=style.foreground, size=f"{style.font_pt(factor):.1f}pt")
