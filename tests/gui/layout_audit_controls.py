"""The layout audit's checks of a figure's Qt controls, beside :mod:`layout_audit`'s checks of drawn figures: combo
boxes that show their whole text, and controls presented at a size the back row reads."""

from __future__ import annotations

__all__ = ["cut_combo_problems", "control_text_problems"]


def cut_combo_problems(widget, what: str) -> list[str]:
    """Each visible combo box of ``widget`` shows its whole current text: the text's width fits the box's text
    field as the style lays it out (the data-set view's score box kept an old item's width and cut "first-token
    (sink) share" to "…shar" after a switch to translate)."""
    from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox

    out = []
    for box in widget.findChildren(QComboBox):
        if not box.isVisibleTo(widget) or not box.currentText():
            continue
        opt = QStyleOptionComboBox()
        box.initStyleOption(opt)
        field = box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                           QStyle.SubControl.SC_ComboBoxEditField, box)
        need = box.fontMetrics().horizontalAdvance(box.currentText())
        if need > field.width():
            out.append(f"{what}: combo {box.currentText()!r} needs {need} px, its field has {field.width()}")
    return out


def control_text_problems(widgets, min_px: float, what: str) -> list[str]:
    """Controls a presented figure keeps on screen (its labels, combo and spin boxes, buttons and sliders) in text
    of at least ``min_px`` and, for a slider, a handle at least that tall: the Training replay's probe, layer,
    head and step controls stayed ~12 px under 25 px axis labels in F5 at 1920×1080."""
    from PySide6.QtGui import QFontInfo
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLabel, QLineEdit, QProgressBar, \
        QSlider, QStyle, QStyleOptionSlider

    out = []
    for w in widgets:
        if not w.isVisibleTo(w.window()):
            continue
        if isinstance(w, QSlider):
            opt = QStyleOptionSlider()
            w.initStyleOption(opt)
            handle = w.style().subControlRect(QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle, w)
            if min(handle.height(), w.height()) < min_px - 0.05:
                out.append(f"{what}: the slider is {w.height()} px tall, its handle {handle.width()} × {handle.height()} px")
        elif isinstance(w, (QLabel, QComboBox, QAbstractSpinBox, QAbstractButton, QProgressBar)):
            # a spin box's text is its line edit's, which kept the desk size when a style sheet froze its font
            px = min(QFontInfo(x.font()).pixelSize() for x in [w, *w.findChildren(QLineEdit)])
            if px < min_px - 0.05:
                text = w.currentText() if isinstance(w, QComboBox) else getattr(w, "text", lambda: "")()  # (bar: its %v)
                out.append(f"{what}: {type(w).__name__} {str(text)[:24]!r} is {px} px")
    return out
