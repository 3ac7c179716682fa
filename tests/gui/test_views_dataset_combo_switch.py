"""Issue 36: the data-set view's combo boxes keep their whole text when the view changes them with their
signals blocked. Drawing translate's cross-attention switched the score box from "previous-token score" to
"first-token (sink) share" silently, and the box kept the old width ("first-token (sink) shar" at 1280×720);
another model's sources offered at the same index ("held-out inputs of the task" after "the input on screen
only") kept the shorter width too. Controls: the audit sees a box squeezed on purpose; a signalled change
was always fine."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget  # noqa: E402

from attnviz.gui.views.dataset_controls import DatasetControls, choose_defined_score  # noqa: E402
from layout_audit_controls import cut_combo_problems  # noqa: E402


def _shown(qtbot):
    """The controls row in a 972-px wide widget (the Data set dock at 1280×720), on screen."""
    controls = DatasetControls()
    holder = QWidget()
    qtbot.addWidget(holder)
    QVBoxLayout(holder).addWidget(controls.row)
    holder.resize(972, 60)
    holder.show()
    qtbot.waitExposed(holder)
    return controls, holder


def _settle(qtbot, holder):
    holder.repaint()  # what the screen does next: the box is painted with its new text
    for _ in range(5):
        QApplication.processEvents()
    qtbot.wait(20)


def test_a_score_switched_while_drawing_shows_its_whole_name(qtbot):
    controls, holder = _shown(qtbot)
    box = controls.score_box
    box.setCurrentIndex(box.findData("previous_token"))
    _settle(qtbot, holder)
    assert not cut_combo_problems(holder, "before")
    assert choose_defined_score(box, ["first_token", "entropy"]) == "previous_token"  # what cross-attention does
    _settle(qtbot, holder)
    assert box.currentData() == "first_token"
    problems = cut_combo_problems(holder, "after the switch")
    assert not problems, problems
    box.setFixedWidth(60)  # control: the audit sees a cut box
    _settle(qtbot, holder)
    assert cut_combo_problems(holder, "squeezed")


def test_another_models_sources_show_their_whole_name(qtbot):
    controls, holder = _shown(qtbot)
    controls.offer_sources(["screen", "corpus"], "screen")  # a Hugging Face folder: no task
    _settle(qtbot, holder)
    assert not cut_combo_problems(holder, "no task")
    controls.offer_sources(["task", "corpus"], "task")  # then a bundled model: its task's inputs
    _settle(qtbot, holder)
    assert controls.source_box.currentText() == "held-out inputs of the task"
    problems = cut_combo_problems(holder, "after the switch")
    assert not problems, problems


def test_the_score_picked_comes_back_where_it_is_defined_again(qtbot):
    """After translate's cross-attention (no previous-token score: the sink share shown instead) every later model
    kept showing the sink share nobody had asked for; the score picked comes back where it is defined. Control: a
    score the user picks is the one kept from then on."""
    controls, _ = _shown(qtbot)
    box = controls.score_box
    assert controls.wanted_score == box.currentData() == "previous_token"
    assert choose_defined_score(box, ["first_token", "entropy"], controls.wanted_score) == "previous_token"
    assert box.currentData() == "first_token"  # cross-attention: the first score it has
    assert choose_defined_score(box, ["previous_token", "first_token"], controls.wanted_score) is None
    assert box.currentData() == "previous_token"  # another model's self-attention: the score asked for again
    box.setCurrentIndex(box.findData("entropy"))  # picked (a change that signals: the user's or a caller's)
    assert controls.wanted_score == "entropy"
    assert choose_defined_score(box, ["previous_token", "entropy"], controls.wanted_score) is None
    assert box.currentData() == "entropy"
