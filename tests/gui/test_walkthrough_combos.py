"""The walkthrough's choosers show each of their items whole (issue 36, item 10: the part combo of translate's
Walkthrough read "cross-attentio" at 1920×1080 and 1280×720): every item of every combo of the step-by-step, matrix
form and sandbox tabs, chosen in turn, in the Walkthrough dock's size at both window sizes."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication, QComboBox  # noqa: E402

from layout_audit_controls import cut_combo_problems  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402

# the Walkthrough dock's figure area in the app's window (1920×1080, 1280×720), as test_matrix_form_named_rows
DOCK_SIZES = [(1500, 820), (980, 470)]


@pytest.fixture(scope="module")
def trace(qapp):
    from attnviz.gui.app import create_application

    create_application()  # the app's font, as the window has it (the cut showed with it, not with the bare one)
    return sample_trace("encoder-decoder", T=8)  # self-, cross- and encoder attention: the part combo's 3 items


def _widget(name: str):
    from attnviz.gui.walkthrough import MatrixFormWidget, SandboxWidget, WalkthroughWidget

    return {"steps": WalkthroughWidget, "matrix": MatrixFormWidget, "sandbox": SandboxWidget}[name]()


def _every_item_problems(w, what: str) -> list[str]:
    out = []
    for box in w.findChildren(QComboBox):
        if not box.isVisibleTo(w):
            continue
        start = box.currentIndex()
        for i in range(box.count()):
            box.setCurrentIndex(i)
            QApplication.processEvents()
            out += cut_combo_problems(w, f"{what} item {i}")
        box.setCurrentIndex(start)
    return sorted(set(out))


@pytest.mark.parametrize("size", DOCK_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", ["steps", "matrix", "sandbox"])
def test_every_combo_item_is_shown_whole(qtbot, trace, name, size):
    w = _widget(name)
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    for _ in range(5):  # laid out before the trace comes, as in the app (the combo sized to "self-attention")
        QApplication.processEvents()
    if name != "sandbox":
        w.set_trace(trace)
    for _ in range(5):
        QApplication.processEvents()
    if name == "steps":
        assert w.part_box.isVisible() and w.part_box.count() == 3  # cross-attention is offered
    assert _every_item_problems(w, f"{name} {size}") == []


@pytest.mark.parametrize("size", DOCK_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_step_name_is_shown_whole(qtbot, size):
    """The step label beside the slider ("mask · between steps 3 and 4") whole at each step of a causal model."""
    from attnviz.gui.walkthrough import WalkthroughWidget

    w = WalkthroughWidget()
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    w.set_trace(sample_trace("decoder", T=8))
    cut = []
    for i in range(len(w.step_list)):
        w.set_step(i)
        QApplication.processEvents()
        label = w.step_label
        if label.fontMetrics().horizontalAdvance(label.text()) > label.contentsRect().width():
            cut.append(label.text())
    assert "mask" in w.step_list and not cut, cut


def test_a_squeezed_part_combo_is_caught(qtbot, trace):
    """Control: the part combo held to the width of "self-attention" cuts "cross-attention"."""
    w = _widget("steps")
    qtbot.addWidget(w)
    w.resize(*DOCK_SIZES[1])
    w.show()
    w.set_trace(trace)
    QApplication.processEvents()
    w.part_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContentsOnFirstShow)
    w.part_box.setFixedWidth(w.part_box.fontMetrics().horizontalAdvance("self-attention") + 20)
    QApplication.processEvents()
    assert any("cross-attention" in p for p in _every_item_problems(w, "squeezed"))
