"""Controls whose text is a formula, written as the figures beside them write it: "Q = X W_Q" with a real subscript
Q (Unicode has subscript digits and a few letters, but no Q), through the figures' own
:func:`~attnviz.gui.widgets.formula_text.formula_html`. A combo box and a check box keep their plain notation as
their text (``currentText``, ``findText``, accessibility) and draw it as rich text; a form's label is a rich QLabel.
The Sandbox printed "Q = X W_Q, K = X W_K", "÷ √d_k", "biases b_Q, b_K, b_V" beside a figure with subscripts."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPalette, QTextDocument
from PySide6.QtWidgets import (QCheckBox, QComboBox, QLabel, QStyle, QStyledItemDelegate, QStyleOptionButton,
                               QStyleOptionComboBox, QStyleOptionViewItem, QStylePainter)

from attnviz.gui.widgets.formula_text import formula_html

__all__ = ["FormulaComboBox", "FormulaCheckBox", "formula_label", "formula_document"]


def formula_document(text: str, font, colour) -> QTextDocument:
    """``text`` (plain notation) laid out as rich text in ``font`` and ``colour``, no margin."""
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    doc.setDefaultStyleSheet(f"body {{ color: {colour.name()}; }}")
    doc.setHtml(f"<body>{formula_html(text)}</body>")
    return doc


def _draw(painter, doc: QTextDocument, rect: QRectF) -> None:
    """``doc`` at the left of ``rect``, centred vertically, clipped to it."""
    painter.save()
    painter.translate(QPointF(rect.left(), rect.top() + (rect.height() - doc.size().height()) / 2))
    doc.drawContents(painter, QRectF(0, 0, rect.width(), doc.size().height()))
    painter.restore()


def _group(widget) -> QPalette.ColorGroup:
    return QPalette.ColorGroup.Normal if widget.isEnabled() else QPalette.ColorGroup.Disabled


def formula_label(text: str) -> QLabel:
    """A form's label ("W_Q") with its index as a subscript."""
    label = QLabel(formula_html(text))
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setAccessibleName(text)
    return label


class _FormulaItems(QStyledItemDelegate):
    """The popup's items as rich text (the selected one in the highlighted text colour)."""

    def paint(self, painter, option, index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        role = QPalette.ColorRole.HighlightedText if opt.state & QStyle.StateFlag.State_Selected else QPalette.ColorRole.Text
        doc = formula_document(text, opt.font, opt.palette.color(role))
        _draw(painter, doc, QRectF(opt.rect).adjusted(6, 0, -2, 0))


    def sizeHint(self, option, index):
        hint = super().sizeHint(option, index)  # a line and a half: the index below the line is not clipped
        hint.setHeight(max(hint.height(), round(option.fontMetrics.height() * 1.5)))
        return hint


class FormulaComboBox(QComboBox):
    """A combo box whose items are formulae in plain notation, shown with real subscripts."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setItemDelegate(_FormulaItems(self))

    def paintEvent(self, event) -> None:
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        text, opt.currentText = opt.currentText, ""
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)  # the frame's inside, no text
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        colour = self.palette().color(_group(self), QPalette.ColorRole.ButtonText)
        _draw(painter, formula_document(text, self.font(), colour), QRectF(field).adjusted(2, 0, 0, 0))


class FormulaCheckBox(QCheckBox):
    """A check box whose text is a formula in plain notation ("biases b_Q, b_K, b_V"), shown with subscripts."""

    def _option(self) -> QStyleOptionButton:
        opt = QStyleOptionButton()
        self.initStyleOption(opt)
        return opt

    def paintEvent(self, event) -> None:
        painter = QStylePainter(self)
        opt = self._option()
        text, opt.text = opt.text, ""
        painter.drawControl(QStyle.ControlElement.CE_CheckBox, opt)
        contents = self.style().subElementRect(QStyle.SubElement.SE_CheckBoxContents, opt, self)
        colour = self.palette().color(_group(self), QPalette.ColorRole.WindowText)
        _draw(painter, formula_document(text, self.font(), colour), QRectF(contents))
