"""Controls that name a formula write it as the figure beside them does (issue 36): Walkthrough ▸ Sandbox printed
"Q = X W_Q, K = X W_K, V = X W_V", "÷ √d_k", "biases b_Q, b_K, b_V" and field labels "W_Q" … in plain notation beside
a figure with real subscripts; Matrix form's "show:" said "all heads: concat(Z) W_O"."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel  # noqa: E402

from attnviz.gui.widgets.formula_text import has_subscripts  # noqa: E402


def _markup_shown(widget) -> list[str]:
    """Texts with an index in plain notation ("W_Q") that a control of ``widget`` would print as typed: a plain
    label's, a combo box's items, a check box's text — unless the control draws formulae (rich_controls)."""
    from attnviz.gui.walkthrough.rich_controls import FormulaCheckBox, FormulaComboBox

    out = [lab.text() for lab in widget.findChildren(QLabel) if lab.isVisibleTo(widget) and has_subscripts(lab.text())]
    for box in widget.findChildren(QComboBox):
        if not isinstance(box, FormulaComboBox):
            out += [box.itemText(i) for i in range(box.count()) if has_subscripts(box.itemText(i))]
    for box in widget.findChildren(QCheckBox):
        if not isinstance(box, FormulaCheckBox) and has_subscripts(box.text()):
            out.append(box.text())
    return out


def test_sandbox_controls_write_subscripts(qtbot):
    from attnviz.gui.walkthrough.sandbox_widget import SandboxWidget

    w = SandboxWidget(debounce_ms=0)
    qtbot.addWidget(w)
    w.bias_box.setChecked(True)  # b_Q, b_K, b_V fields shown
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    assert _markup_shown(w) == []
    # the formulae are still there, as the controls' text (what tests, screen readers and findText see)
    assert w.mode_box.itemText(0) == "Q = X W_Q, K = X W_K, V = X W_V" and w.scale_box.itemText(0) == "÷ √d_k"
    labels = [lab.text() for lab in w.findChildren(QLabel) if lab.isVisibleTo(w)]
    assert all(f"W<sub>{n}</sub>" in labels for n in "QKV") and all(f"b<sub>{n}</sub>" in labels for n in "QKV")


def test_matrix_form_parts_write_subscripts(qtbot):
    from attnviz.gui.walkthrough.matrix_form_widget import MatrixFormWidget

    w = MatrixFormWidget()
    qtbot.addWidget(w)
    assert "all heads: concat(Z) W_O" in [w.section_box.itemText(i) for i in range(w.section_box.count())]
    assert _markup_shown(w) == []


def test_plain_controls_are_caught(qtbot):
    """Negative control of the measure: a plain combo box, check box and label with "W_Q" are reported."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    lay = QVBoxLayout(host)
    combo = QComboBox()
    combo.addItem("Q = X W_Q")
    for child in (combo, QCheckBox("biases b_Q"), QLabel("W_Q")):
        lay.addWidget(child)
    assert sorted(_markup_shown(host)) == sorted(["Q = X W_Q", "biases b_Q", "W_Q"])


def _text_right(qtbot, box) -> int:
    """The rightmost dark pixel of a control's text (its arrow and frame are lighter or further right)."""
    qtbot.addWidget(box)
    box.resize(220, 40)
    img = box.grab().toImage()
    cols = [x for x in range(150) for y in range(img.height()) if img.pixelColor(x, y).lightness() < 90]
    return max(cols)


def _make(kind: str, formula: bool, text: str):
    from attnviz.gui.walkthrough.rich_controls import FormulaCheckBox, FormulaComboBox

    if kind == "check":
        return (FormulaCheckBox if formula else QCheckBox)(text)
    box = (FormulaComboBox if formula else QComboBox)()
    box.addItem(text)
    return box


@pytest.mark.parametrize("kind", ["combo", "check"])
def test_formula_controls_draw_the_index_small(qtbot, kind):
    """"W_Q" is drawn as W with a small Q: narrower than "WQ" (no underscore, the index smaller). Negative control:
    the plain control draws "W_Q" wider than "WQ"."""
    assert _text_right(qtbot, _make(kind, True, "W_Q")) < _text_right(qtbot, _make(kind, True, "WQ"))
    assert _text_right(qtbot, _make(kind, False, "W_Q")) > _text_right(qtbot, _make(kind, False, "WQ"))
