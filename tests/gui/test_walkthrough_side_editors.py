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
    from attnviz.gui.walkthrough.whatif_switches import NARROW_PX

    w = SandboxWidget() if kind == "sandbox" else WhatIfPanel(None)
    qtbot.addWidget(w)
    # what-if's switches stand in their column from NARROW_PX on (narrower, in a bar above: test_whatif_map_room)
    w.resize(*(DOCK_720 if kind == "sandbox" else (NARROW_PX, DOCK_720[1])))
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


@pytest.mark.parametrize("size, stacked", [((700, 470), True), (DOCK_720, False), ((1500, 820), False)],
                         ids=["narrow", "1280x720", "1920x1080"])
def test_whatif_maps_stack_rather_than_scroll_sideways(qtbot, size, stacked):
    """What if ▸ induction (21 tokens): "attention as trained" and "with the switches", every token named, side by
    side in a 1920×1080 dock and in a 1280×720 one (its switches above the figure); one above the other in a
    narrower one, which scrolled sideways by 103 px."""
    from layout_audit import grid_problems

    from attnviz.gui.walkthrough import WhatIfPanel, sync_runner
    from attnviz.runtime import load_model

    panel = WhatIfPanel(run_async=sync_runner)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_model(load_model("induction", device="cpu"))
    panel.set_input(text="blackhorseblackhorse")
    panel.rerun()
    qtbot.waitUntil(lambda: "P_after" in panel.grids, timeout=30_000)
    for _ in range(10):
        QApplication.processEvents()
    assert panel.scroll.horizontalScrollBar().maximum() == 0
    assert panel.maps_row.wrapped == stacked
    problems = [p for n in ("P_before", "P_after") for p in grid_problems(panel.grids[n], 1.0, 12.0, n)]
    assert not problems, problems
