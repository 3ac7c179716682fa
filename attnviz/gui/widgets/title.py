"""Figure titles and captions: they take only the height of their text (a plain LabelItem grows with the
layout) and wrap to the width they are given (a plain LabelItem's minimum width is its text's)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSizePolicy

from attnviz.gui.pyqtgraph_private import set_size_hint
from attnviz.gui.style import ViewStyle

__all__ = ["make_title", "set_title", "centre_lines"]


class _WrappingLabel(pg.LabelItem):
    """A LabelItem that wraps its text to the width it is given instead of claiming the text's width,
    so panels side by side get equal columns and a narrow dock wraps the caption (lines centred)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _centre(self.item.document())

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
        set_size_hint(self, Qt.SizeHint.MinimumSize, (0, height))
        set_size_hint(self, Qt.SizeHint.PreferredSize, (0, height))
        self.updateGeometry()


def _centre(document) -> None:
    option = document.defaultTextOption()
    option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    document.setDefaultTextOption(option)


def centre_lines(text_item) -> None:
    """The lines of a text item (a caption "PC1" over "22.4%") centred on each other; alignment needs a text
    width, here its widest line's."""
    _centre(text_item.document())
    text_item.setTextWidth(-1)
    text_item.setTextWidth(text_item.document().idealWidth())


def make_title() -> pg.LabelItem:
    """A centred title or panel caption: height fixed to its (wrapped) text, no minimum width, so a
    long title in a narrow dock wraps instead of pushing the figure out of view."""
    item = _WrappingLabel("", justify="center")
    item.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    return item


def set_title(item: pg.LabelItem, text: str, style: ViewStyle, factor: float = 1.2) -> None:
    """Set the title text in the style's foreground colour at ``factor`` × the base font size."""
    shown = (text, style.foreground, f"{style.font_pt(factor):.1f}pt")
    if getattr(item, "_attnviz_shown", None) == shown:
        return  # a keystroke re-sets the same title: laying its rich text out again took ~3 ms
    item.setText(text, color=shown[1], size=shown[2])
    item._attnviz_shown = shown
