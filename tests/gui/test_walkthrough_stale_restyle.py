"""Issue 36: a hidden walkthrough tab never keeps another model's numbers. After a model switch (the old trace
replaced by None, then by the new model's) a restyle — F5 restyles every page — drew the six steps of the previous
model against a None trace and raised (AttributeError on n_kv_heads); the window then never went full screen."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402
from walkthrough_fixtures import make_trace, model_dir, show_widget  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.walkthrough import WalkthroughPage  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def _page_on(qtbot, trace):
    page = show_widget(qtbot, WalkthroughPage(Selection()))
    page.set_trace(trace)
    for i in range(page.count()):  # each sub-tab once on screen: it computes what it shows
        page.setCurrentIndex(i)
        QApplication.processEvents()
    page.setCurrentIndex(0)
    QApplication.processEvents()
    return page


def test_a_hidden_walkthrough_drops_the_old_models_steps_and_survives_a_restyle(tmp_path, qtbot):
    old = make_trace(model_dir(tmp_path / "a", n_kv_heads=2))
    new = make_trace(model_dir(tmp_path / "b", n_heads=2, d_model=8))
    page = _page_on(qtbot, old)
    assert page.steps.steps is not None and page.matrix.form is not None  # control: they held the old numbers
    page.hide()  # another tab of the window is on screen
    page.set_trace(None)  # the model switch: the old trace goes first
    assert page.steps.steps is None  # not the old model's steps
    page.set_style(PRESETS["presentation"])  # F5 restyles every page: raised here before the fix
    page.set_trace(new)
    page.set_style(PRESETS["default"])
    assert page.steps.steps is None  # still hidden: nothing computed, nothing of the old model kept
    page.show()
    qtbot.waitExposed(page)
    QApplication.processEvents()
    s = page.steps.steps
    assert s is not None and page.steps.trace is new
    assert len(s.key_tokens) == len(new.tokens) and page.steps.head_box.maximum() == new.n_heads - 1


def test_a_visible_walkthrough_redraws_in_the_new_style(tmp_path, qtbot):
    """Control: the skip applies only to a hidden, out-of-date tab; one on screen restyles its grids at once."""
    page = _page_on(qtbot, make_trace(model_dir(tmp_path / "a")))
    before = page.steps.grids
    page.set_style(PRESETS["presentation"])
    assert page.steps.grids and all(g.style is PRESETS["presentation"] for g in page.steps.grids.values())
    assert page.steps.grids is not before
