"""Layout audit, the docks beside the attention views: the Training tab's replay of a 21-token probe and the data-set
view's mean pattern, every position named in legible labels (split from test_layout_audit.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from layout_audit import MIN_PX, scene_problems  # noqa: E402
from test_layout_audit import SIZES, _bundled  # noqa: E402

pytestmark = pytest.mark.slow

MIN_ROW_PX = 20.0  # the Training replay's rows at 1920×1080


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_training_probe_map_names_every_token(make_window, qtbot, size):
    """The Training tab's replay of a 21-token probe (induction's): every row and column named, in full-size
    labels at 1920×1080 (it had 12 rows in ~100 px); at 1280×720 too, with the settings form folded behind its
    button (beside it the map was 239 px wide and named every 2nd key), which brings the form back."""
    # found in a helper: a failing assert here holds no window in its traceback (which would leak it)
    problems = _probe_map_problems(make_window, qtbot, size)
    assert not problems, "\n".join(problems)


def _probe_map_problems(make_window, qtbot, size) -> list[str]:
    import numpy as np

    from attnviz.training.snapshots import Snapshots

    w, h = size
    tokens = ["[BOS]"] + list("blackhorseblackhorse")
    probs = np.tril(np.random.default_rng(0).random((2, 21, 21))).astype(np.float32)
    probs /= probs.sum(-1, keepdims=True)
    snaps = Snapshots(steps=[0, 10], probes=[{"input": "blackhorseblackhorse", "tokens": tokens}], parts=["self"],
                      arrays={f"s{k}.p0.L0": probs for k in range(2)})
    win = make_window(model="tiny-encoder", text="the cat sat")
    win.showNormal()
    win.resize(w, h)
    qtbot.waitUntil(lambda: win.training is not None and win.trace is not None, timeout=90_000)
    win.tabs.setCurrentWidget(win.training_page)
    # the loaded model's own (no) snapshots reach the tab in an idle step of their own: wait for them, so
    # the replay shown here is not replaced by them afterwards
    qtbot.waitUntil(lambda: win.pages.snapshots_current,
                    timeout=60_000)
    win.training.show_model_snapshots(snaps, True)
    for _ in range(8):
        QApplication.processEvents()
    view = win.training.timeline.view
    assert view.trace is not None and view.heatmap.left.labels[0] == "[BOS]"
    what = f"training probe map {w}×{h}"
    problems = scene_problems(view.canvas.scene(), 1.0, MIN_PX if w >= 1920 else None, what)
    pitch = view.heatmap.vb.height() / len(tokens)
    if w >= 1920 and pitch < MIN_ROW_PX:  # a row a lecturer can point at (above the curves it was ~17 px)
        problems.append(f"{what}: rows are {pitch:.1f} px")
    if win.width() > w:
        problems.append(f"{what}: the window cannot be as narrow as the screen ({win.width()} px)")
    form, toggle = win.training.splitter.widget(0), win.training.form_toggle
    if w < 1920:  # compact: the form folded, one click away
        if form.isVisible() or not toggle.isVisible():
            problems.append(f"{what}: the settings form is {'shown' if form.isVisible() else 'hidden'} and its "
                            f"button {'shown' if toggle.isVisible() else 'hidden'}")
        toggle.click()
        QApplication.processEvents()
        if not form.isVisible():
            problems.append(f"{what}: the button did not bring the settings form back")
        if win.width() > w:
            problems.append(f"{what}: with the form, the window is wider than the screen ({win.width()} px)")
    elif not form.isVisible() or toggle.isVisible():
        problems.append(f"{what}: the settings form folded in a full-size window")
    return problems


def test_data_set_mean_pattern_is_legible_in_its_dock(qtbot):
    """The data-set view as its dock is at 1920×1080 (~620 × 740 px): the scores grid and the selected head's
    mean pattern titled, every position named in labels of at least ``MIN_PX`` (they were 5-8 px)."""
    from attnviz.gui.views.dataset_view import DatasetView
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    _bundled()
    view = DatasetView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(620, 740)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.scores_ready, timeout=120_000):
        view.set_trace(run_trace(load_model("coref", device="cpu"), text="The animal didn't cross the street"))
    for _ in range(5):
        QApplication.processEvents()
    assert view.pattern.image.isVisible() and view.pattern.left.labels
    problems = scene_problems(view.canvas.scene(), 1.0, MIN_PX, "data-set view 620×740")
    assert not problems, "\n".join(problems)
