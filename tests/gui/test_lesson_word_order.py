"""The live lesson's scene 12, “good, not bad” vs “bad, not good” (issue 36): its column labels name the comma
token as a token ("5 “,”", not "5 ," read as a stray mark), and its notes — both models' accuracies, where their
attention moved, the caveat, the two sentences — are all on the page, none cut, at 1280×720 and 1920×1080."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget  # noqa: E402

# the lesson stage's size for its figure, full screen on each screen (lesson_mode.LessonStage's margins)
PAGES = {"1280x720": ((1264, 622), 720), "1920x1080": ((1904, 946), 1080)}
NUMBERED_PUNCTUATION = re.compile(r"^[\d,]+ [^\w“\s]+$")  # "5 ," — a number, then punctuation unquoted


@pytest.fixture(scope="module")
def word_order_scene():
    """The lesson's word-order scene and its computed figure (both models, 200 held-out sentences each)."""
    from attnviz.figures.scenes import compute_scene_figure
    from attnviz.io import bundled_models
    from attnviz.lessons.claims import Workbench
    from attnviz.lessons.lesson import load_lesson

    if not {"order-sentiment", "order-sentiment-nopos"} <= set(bundled_models()):
        pytest.skip("the bundled models are not built (make assets)")
    scene = next(s for s in load_lesson("attention").scenes if s.view == "word-order")
    return scene, compute_scene_figure(scene, Workbench())


def test_the_comma_token_is_named_as_a_token(word_order_scene):
    _, (_, _, _, panels) = word_order_scene
    for panel in panels.panels:
        assert "5 “,”" in panel.cols, panel.cols
        assert not [c for c in panel.cols if NUMBERED_PUNCTUATION.match(c)], panel.cols
    # the check sees the old labels (a control): "5 ," is a number and a bare comma
    assert NUMBERED_PUNCTUATION.match("5 ,") and not NUMBERED_PUNCTUATION.match("4 good/bad")


def _page(word_order_scene, qtbot, size, lines):
    from attnviz.figures.scenes import make_scene_view
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, HELD_FLOOR

    _, (spec, trace, state, panels) = word_order_scene
    page = QWidget()  # the lesson stage: 12 px type held at every screen size
    page.setProperty(HELD_FLOOR, DOCKED_FLOOR_PT)
    qtbot.addWidget(page)
    view, selection = make_scene_view(spec, trace, state, panels, compose_style("light", True, "viridis", lines=lines))
    QVBoxLayout(page).addWidget(view)
    page.layout().setContentsMargins(0, 0, 0, 0)
    page.resize(*size)
    page.show()
    qtbot.waitExposed(page)
    for _ in range(6):
        QApplication.processEvents()
    page.grab()  # drawn once: the maps' bars and the notes' row settle
    QApplication.processEvents()
    return page, view, selection, panels


def notes_problems(view, panels) -> list[str]:
    """Notes missing from the figure, or drawn past their row or the canvas (cut)."""
    notes = view.notes
    shown = notes.item.toPlainText()
    flat = shown.replace("\n", " ").replace("\u2028", " ")
    problems = [f"note missing: {n!r}" for n in panels.notes if n not in flat]
    if not notes.isVisible() or not shown.strip():
        problems.append("the notes are not shown")
    text_h, row_h = notes.item.boundingRect().height(), notes.geometry().height()
    if text_h > row_h + 1:
        problems.append(f"the notes need {text_h:.0f} px, their row has {row_h:.0f}")
    # on screen: the canvas shows its scene from the top, as tall as its viewport (the figure item can be
    # taller than that and is then cut at the bottom)
    canvas_h = view.canvas.viewport().height()
    bottom = view.canvas.mapFromScene(notes.item.sceneBoundingRect().bottomLeft()).y()
    if bottom > canvas_h + 1:
        problems.append(f"the notes end at {bottom:.0f} px, below the canvas's {canvas_h} px")
    return problems


@pytest.mark.parametrize("page_size", list(PAGES), ids=list(PAGES))
def test_word_order_notes_are_whole_on_the_page(word_order_scene, qtbot, page_size):
    size, lines = PAGES[page_size]
    page, view, _selection, panels = _page(word_order_scene, qtbot, size, lines)
    assert len(panels.notes) >= 6  # both models' two lines, the caveat, the two sentences
    assert notes_problems(view, panels) == []


def test_notes_check_sees_cut_notes(word_order_scene, qtbot):
    """Negative control: the notes' row held to a few pixels (as the maps' colour bars once took it) and a note
    the figure does not show are both reported."""
    page, view, _selection, panels = _page(word_order_scene, qtbot, *PAGES["1280x720"])
    view._hold_notes_height = lambda: None
    view.figure.layout.setRowMinimumHeight(2, 0)
    view.notes.setMaximumHeight(20)
    view.figure.layout.invalidate()
    for _ in range(4):
        QApplication.processEvents()
    found = notes_problems(view, panels)
    assert any("their row has" in p for p in found), found
    from dataclasses import replace

    assert notes_problems(view, replace(panels, notes=panels.notes + ["a note not drawn"])), "a missing note passed"


def test_numbered_label_quotes_punctuation_alone():
    from attnviz.text.token_display import numbered_label

    assert numbered_label(5, ",") == "5 “,”" and numbered_label(1200, "Ġ.") == "1,200 “.”"
    # words, brackets round words, visible whitespace and byte tokens are names already: not quoted
    assert [numbered_label(0, t) for t in ("[CLS]", "good/bad", " ", "Ċ", "Ĕ", "a,b")] == [
        "0 [CLS]", "0 good/bad", "0 ␣", "0 ⏎", "0 <0x14>", "0 a,b"]


@pytest.mark.parametrize("view_name", ["PositionalEncodingView", "PositionSimilarityView"])
def test_positions_as_waves_names_the_comma_row(qtbot, view_name):
    """Scene 13 ("Positions as waves"): the row of a comma token reads "3 “,”" (it read "32 ," at both sizes);
    the position-similarity map names its rows the same way."""
    from attnviz.bench.traces import sample_trace
    from attnviz.gui import views
    from attnviz.selection import Selection

    trace = sample_trace("encoder", T=9, pos="sinusoidal")
    tokens = list(trace.tokens)
    tokens[3] = ","
    trace.tokens = tokens
    selection = Selection()
    view = getattr(views, view_name)(selection=selection)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    labels = view.heatmap.left.labels
    assert labels[3] == "3 “,”" and labels[2].startswith("2 ") and not labels[2].startswith("2 “"), labels[:5]


def _live_word_order_problems(make_window, qtbot, monkeypatch, size) -> list[str]:
    from test_layout_audit_lesson import BUNDLED

    from attnviz.gui.panels.presentation import leave_presentation
    from attnviz.gui.window.pages import Pages
    from attnviz.gui.window.scene_actions import start_lesson

    w, h = size
    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))
    monkeypatch.setattr(Pages, "_screen_lines", lambda self: h)
    stage = start_lesson(win, "attention", view="word-order")  # the lesson opened on this scene
    try:
        qtbot.waitUntil(win.isFullScreen, timeout=10_000)
        win.setGeometry(0, 0, w, h)  # full screen on that screen
        qtbot.waitUntil(lambda: win.width() == w and win.height() == h, timeout=10_000)
        qtbot.waitUntil(lambda: stage.view is not None, timeout=120_000)
        stage._lane.cancel()
        for _ in range(3):  # the offscreen platform's full-screen request can land late and resize the window
            for _ in range(10):
                QApplication.processEvents()
            if (win.width(), win.height()) != (w, h):
                win.setGeometry(0, 0, w, h)
        for _ in range(10):
            QApplication.processEvents()
        assert (win.width(), win.height()) == (w, h)
        view = stage.view
        where = f" (window {win.width()}×{win.height()}, figure page {view.width()}×{view.height()})"
        return [p + where for p in notes_problems(view, view.panels)]
    finally:
        leave_presentation(win)
        qtbot.waitUntil(lambda: win.tabs.indexOf(stage) < 0, timeout=30_000)


@pytest.mark.slow
@pytest.mark.parametrize("page_size", list(PAGES), ids=list(PAGES))
def test_word_order_notes_whole_when_the_lesson_opens_on_it(word_order_scene, make_window, qtbot, monkeypatch,
                                                             page_size):
    """The live lesson opened on scene 12 (its figure laid out while the stage was still settling): every note on
    screen. The figure item stayed as tall as the notes once needed when first laid out narrow (1030 px in a
    921 px canvas at 1920×1080) and the last three notes were cut."""
    size = {"1280x720": (1280, 720), "1920x1080": (1920, 1080)}[page_size]
    problems = _live_word_order_problems(make_window, qtbot, monkeypatch, size)
    assert not problems, "\n".join(problems)
