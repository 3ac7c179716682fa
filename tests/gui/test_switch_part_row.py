"""The part row and the tab set follow the loaded model, not the last trace (issue 36): after translate → an
image model, loaded and not run yet, translate's "Show: encoder self-attention | cross-attention … | decoder
self-attention" row and its tab set stood over "no input yet"."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


def test_a_switch_takes_the_previous_models_part_row_and_tabs_with_it(make_window, qtbot):
    translate = Path(__file__).resolve().parents[2] / "assets" / "models" / "translate"
    if not (translate / "config.json").exists():
        pytest.skip("the bundled translate model is not built")
    win = make_window(start=False, model=str(translate), text="the big dog sees a small cat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    bar, area = win.part_bar, win.views_area
    # the controls: translate's row is up, and an image model's tab is closed for it
    assert not bar.isHidden()
    assert "FilterPCAView" in area.not_offered
    seen = {}

    def at_load(_ref):  # the moment the new model is in, before its first trace
        seen.update(trace=win.trace, bar_hidden=bar.isHidden(), closed=dict(area.not_offered),
                    menu=area.docks["FilterPCAView"].toggleViewAction().isEnabled())

    win.model_loaded.connect(at_load)
    with qtbot.waitSignal(win.model_loaded, timeout=60000):
        win.load_model("tiny-vit")  # (it has no example image: no run follows)
    assert seen["trace"] is None  # (it was before the image model's run)
    assert seen["bar_hidden"], "translate's part row outlived the switch"
    assert "FilterPCAView" not in seen["closed"] and seen["menu"], "the image model's tab set came with its trace"

    seen.clear()
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.load_model(str(translate))  # and back: translate's row and tabs as soon as it is loaded
    assert seen["trace"] is None and not seen["bar_hidden"] and "FilterPCAView" in seen["closed"]
    assert all(bar._action_of(b).isVisible() for b in bar.buttons.values())
