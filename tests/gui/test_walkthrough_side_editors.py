"""The sandbox's and what-if's editors beside their figure are never cut (issue 36): their scroll area has no sideways
scroll bar, and in a 1280×720 window's Walkthrough dock (~980 px) the sandbox's scale box and attention line lost
~25 px at the right edge."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

DOCK_720 = (980, 470)  # the Walkthrough dock's figure area of a 1280×720 window (test_matrix_form_named_rows)


def _cut(w) -> int:
    """Pixels of the editors' minimum width the side scroll area does not show."""
    side = w.splitter.widget(0)
    editors = side.widget()
    return max(0, max(editors.minimumSizeHint().width(), editors.minimumWidth()) - side.viewport().width())


def _shown(qtbot, kind: str):
    from attnviz.gui.walkthrough.sandbox_widget import SandboxWidget
    from attnviz.gui.walkthrough.whatif_panel import WhatIfPanel

    w = SandboxWidget() if kind == "sandbox" else WhatIfPanel(None)
    qtbot.addWidget(w)
    w.resize(*DOCK_720)
    w.show()
    qtbot.waitExposed(w)
    for _ in range(5):
        QApplication.processEvents()
    return w


@pytest.mark.parametrize("kind", ["sandbox", "whatif"])
def test_side_editors_are_whole_in_a_1280x720_dock(qtbot, kind):
    w = _shown(qtbot, kind)
    assert _cut(w) == 0


def test_the_check_sees_cut_editors(qtbot):
    """Control: editors made wider than their column after it was laid out are reported cut."""
    w = _shown(qtbot, "sandbox")
    w.splitter.widget(0).widget().setMinimumWidth(900)
    QApplication.processEvents()
    assert _cut(w) > 0
