"""What the data-set and patch views offer a vision model and a text model (issue 36).

A vision model's data-set view offered a "previous-token score": its tokens are [CLS] and patches read row by row,
so A[i, i−1] is the previous patch in reading order, and the score is named so. A text model's window offered a
"Patch filters" tab that showed one line ("belong to image models"): it is closed for a text model, its View ▸
Panels entry disabled with that reason as tooltip, and open again for an image model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.analysis.head_scores import SCORE_LABELS, score_label  # noqa: E402


def test_a_vision_models_previous_token_score_is_named_for_patches():
    assert score_label("previous_token", {"kind": "vit", "n_repeated": 0}) == "previous-patch score (reading order)"
    # control: a text model's is the previous token's
    assert score_label("previous_token", {"kind": "decoder", "n_repeated": 0}) == SCORE_LABELS["previous_token"]


def test_the_data_set_view_names_the_previous_patch_for_an_image_model(qtbot):
    from attnviz.gui.views.dataset_view import DatasetView
    from attnviz.runtime import load_model, run_trace
    from dataset_views import make

    from attnviz.vision.samples import sample_images

    loaded = load_model("shapes", device="cpu")
    trace = run_trace(loaded, image=next(iter(sample_images().values())))
    view, _ = make(qtbot, DatasetView, trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    box = view.score_box
    texts = [box.itemText(i) for i in range(box.count())]
    assert "previous-patch score (reading order)" in texts and "previous-token score" not in texts, texts
    assert view.score == "previous_token" and "Previous-patch score" in view.grid.title.text, view.grid.title.text
    header = view.table.horizontalHeaderItem(3)
    assert header.text() == "prev-patch" and "reading order" in header.toolTip()
    # the column as wide as its new name (sized for "prev" it showed "rev-patc")
    need = view.table.horizontalHeader().sectionSizeFromContents(3).width()
    assert view.table.columnWidth(3) >= need, (view.table.columnWidth(3), need)
    assert np.isfinite(view.score_table()).any()


def _switch(win, qtbot, ref: str) -> None:
    old = win.trace
    win.load_model(ref)
    qtbot.waitUntil(lambda: win.loaded is not None and win.trace is not None and win.trace is not old and
                    win.trace.meta.get("model_name") == win.loaded.name, timeout=120_000)
    for _ in range(5):
        QApplication.processEvents()


def test_patch_filters_are_closed_for_a_text_model_and_open_for_an_image_model(make_window, qtbot, monkeypatch):
    from pathlib import Path

    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    win.resize(1900, 1000)  # not compact: no tab is folded for room
    qtbot.waitUntil(lambda: bool(win.views_area.docks) and win.trace is not None, timeout=90_000)
    area = win.views_area
    qtbot.waitUntil(lambda: not area.folded, timeout=10_000)
    dock, pos = area.docks["FilterPCAView"], area.docks["PositionalEncodingView"]
    action = dock.toggleViewAction()
    assert dock.isHidden() and not action.isEnabled() and "belong to image models" in action.toolTip()
    assert not pos.isHidden() and pos.toggleViewAction().isEnabled()  # control: a view for every model stays
    blob = area.saveState()  # the layout file, saved with a text model shown
    assert dock.isHidden()
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(Path(__file__).resolve().parents[2] / "assets"))  # the bundled models
    _switch(win, qtbot, "shapes")
    assert not dock.isHidden() and action.isEnabled(), "an image model's patch filters are offered again"
    area.restoreState(blob)  # that layout restored (the next start) with an image model: its patch filters open
    assert not dock.isHidden() and action.isEnabled()
    _switch(win, qtbot, "induction")
    assert dock.isHidden() and not action.isEnabled()
    # a dock the user closed stays closed when a model it serves comes
    pos.hide()
    _switch(win, qtbot, "digits")
    assert pos.isHidden() and not dock.isHidden()
