"""A sentence typed into a live lesson's scene runs through the same figure; the caption under it was measured on
the scene's own sentence and says so (issue 36: "One product computes all 12×12 weights" stood under the 18 × 18
matrices of a typed sentence). Typing the scene's sentence again drops the note. The title too says that the figure
shows the typed sentence (audit a37: "“it” finds the animal" stood over a typed sentence in which it found the
street)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "models"
TYPED = "The animal did not cross the busy street yesterday because it was far too tired and slow"


def _captions(make_window, qtbot, monkeypatch) -> list[tuple[str, str]]:
    from attnviz.gui.panels.presentation import leave_presentation
    from attnviz.gui.window.scene_actions import start_lesson

    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))
    stage = start_lesson(win, "attention", view="matrix-form")
    seen = []
    try:
        qtbot.waitUntil(lambda: stage.view is not None, timeout=120_000)
        qtbot.waitUntil(lambda: "measuring" not in stage.caption.text(), timeout=120_000)
        own = stage.scene.text
        seen.append((stage.caption.text(), stage.title.text()))
        for text in (TYPED, own):
            stage.input.setText(text)
            with qtbot.waitSignal(stage.figure_updated, timeout=120_000):
                stage.input.returnPressed.emit()
            seen.append((stage.caption.text(), stage.title.text()))
    finally:
        leave_presentation(win)
        qtbot.waitUntil(lambda: win.tabs.indexOf(stage) < 0, timeout=30_000)
    return seen


def test_the_caption_says_it_is_about_the_scenes_sentence(make_window, qtbot, monkeypatch):
    from test_layout_audit import _bundled

    _bundled()
    (first, title), (typed, typed_title), again = _captions(make_window, qtbot, monkeypatch)
    assert "12×12" in first and "typed" not in first  # control: the scene's own caption, measured
    assert typed.startswith(first) and "scene's own sentence, not the one typed" in typed, typed
    assert typed_title.startswith(title) and "(scene's sentence; figure: your sentence)" in typed_title and "your" not in title
    assert again == (first, title)
