"""The group-box titles of a presented figure at the figure's own title size.

A group box takes its title's size from the application font, which presenting enlarges less than the views'
style: the Training tab presented (F5) titled its curves and its replay ("Training curves", "How attention
emerged …") at ~10–12 px under 20 px figure titles. While presenting, each visible group box of the figure gets
the size the figure's titles have (``set_title``'s 1.2 × the style's type); leaving gives the old sheet back.
The sheet names QGroupBox alone, and a sheet's font does not pass to children: the boxes' controls keep theirs.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGroupBox, QWidget

__all__ = ["TITLE_FACTOR", "enlarge_group_titles", "restore_group_titles"]

TITLE_FACTOR = 1.2  # as the figures' own titles (widgets/title.py set_title)


def enlarge_group_titles(fig: QWidget, style) -> list[tuple[QGroupBox, str, QFont | None]]:
    """Set each group box of ``fig`` (and ``fig`` itself, if one) to the presented title size; returns
    (box, its sheet before, its own font or None: it followed the application's) for :func:`restore_group_titles`."""
    boxes = ([fig] if isinstance(fig, QGroupBox) else []) + fig.findChildren(QGroupBox)
    sheet = f"QGroupBox {{ font-size: {style.font_pt(TITLE_FACTOR):.1f}pt; font-weight: bold; }}"
    changed = []
    for box in boxes:
        own = QFont(box.font()) if box.testAttribute(Qt.WidgetAttribute.WA_SetFont) else None
        changed.append((box, box.styleSheet(), own))
        box.setStyleSheet(sheet)
    return changed


def restore_group_titles(changed) -> None:
    for box, sheet, own in changed:
        if shiboken6.isValid(box):
            box.setStyleSheet(sheet)
            # the sheet's font stays set on the box after the sheet goes: without this the boxes kept the presented
            # application font (13 px for 12) when the application's own came back
            box.setFont(own if own is not None else QFont())
