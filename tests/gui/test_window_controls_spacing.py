"""Issue 36: the All heads dock's "Table" button touched its "colours:" label (1280×720 and 1920×1080): two
controls read as one. Between them now a gap a reader sees; control: the label and the chooser it names stay
the pair they are (a narrow gap), so the measure is not blind to touching widgets."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QLabel  # noqa: E402

MIN_GAP = 10  # px between two controls that are not one pair (the style's own spacing is ~6)


def _gap(left, right) -> int:
    return right.geometry().left() - left.geometry().right() - 1


def test_table_button_stands_apart_from_the_colours_control(qtbot):
    from attnviz.gui.views.model_view import ModelView
    from attnviz.selection import Selection

    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(970, 500)
    view.show()
    qtbot.waitExposed(view)
    QApplication.processEvents()
    label = next(w for w in view.findChildren(QLabel) if w.text() == "colours:" and w.isVisible())
    assert view.table_button.isVisible()
    assert _gap(view.table_button, label) >= MIN_GAP, _gap(view.table_button, label)
    assert _gap(label, view.scale_box) < MIN_GAP  # control: a label beside its field measures close
