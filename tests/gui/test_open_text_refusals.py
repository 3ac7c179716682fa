"""File ▸ Open text… with a bad file (issue 34 item 3, issue 36): a visible notice, never a traceback.

A file that cannot be read as text (binary, empty, above the size bound, not UTF-8) is refused before it
replaces anything: the input box and the views keep the last input. A text longer than the model's context
runs and is refused by the model: the views are cleared and each says why it is empty (the refusal), not
"no input yet". The control in every case: a good file opens (its tokens are the trace's), and after it no
view speaks of a refusal.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from attnviz.text.text_file import MAX_TEXT_FILE_BYTES
from deberta_window import open_deberta


def _ready(make_window, qtbot):
    win = make_window(start=False, model="tiny-decoder", text="the cat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    return win


def _open_good(win, qtbot, tmp_path, text="the dog sat"):
    f = tmp_path / "good.txt"
    f.write_text(text, encoding="utf-8")
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        assert win.input_panel.open_text_file(str(f))
    assert "".join(got.args[0].tokens) == text and win.trace is got.args[0]
    return got.args[0]


BAD_FILES = {  # name: (bytes, words the notice must hold)
    "binary": (bytes(range(256)) * 4, "not a text file"),
    "empty": (b"", "has no text"),
    "blank": (b" \n\t\n", "has no text"),
    "too large": (b"a" * (MAX_TEXT_FILE_BYTES + 1), "larger than 8 MB"),
    "not UTF-8": ("naïve café".encode("latin-1"), "not UTF-8"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_a_file_that_is_not_text_is_a_notice_and_keeps_what_is_shown(make_window, qtbot, tmp_path, name):
    win = _ready(make_window, qtbot)
    shown = _open_good(win, qtbot, tmp_path)  # the control: a good file opens
    data, words = BAD_FILES[name]
    f = tmp_path / "bad.txt"
    f.write_bytes(data)
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        assert not win.input_panel.open_text_file(str(f))
    text, level = got.args
    assert words in text and "Traceback" not in text and "\n" not in text and level == "warning"
    assert win.notice.isVisible()
    assert win.input_panel.text == "the dog sat" and win.trace is shown  # nothing replaced


def _view(win, name):
    return next(v for v in win.views_area.views if type(v).__name__ == name)


def _empty_texts(win) -> dict[str, str]:
    """What the head map, token lines, All heads, six steps and matrix form say while empty."""
    out = {"head map": _view(win, "HeadMapView").heatmap.title.text,
           "token lines": _view(win, "TokenLinesView").title_item.text,
           "all heads": _view(win, "ModelView").title_item.text}
    for name, w in (("six steps", win.walkthrough.steps), ("matrix form", win.walkthrough.matrix)):
        out[name] = " ".join(label.text() for label in w.board.findChildren(QLabel))
    return out


def test_a_text_longer_than_the_context_is_cut_with_a_notice(make_window, qtbot, tmp_path):
    win = _ready(make_window, qtbot)
    _open_good(win, qtbot, tmp_path)  # the control: within the context nothing is cut
    assert not win.notice.isVisible()
    f = tmp_path / "long.txt"
    f.write_text("the cat sat on the mat " * 20, encoding="utf-8")  # 460 characters: the model reads 64
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as shown, \
            qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        assert win.input_panel.open_text_file(str(f))
    text, level = got.args
    assert "truncated to the model's 64 positions (it had 460 tokens)" in text and "Traceback" not in text
    assert level == "warning" and win.notice.isVisible()
    assert len(shown.args[0].tokens) == 64


def test_a_refused_text_clears_the_views_and_they_say_why(make_window, qtbot, tmp_path, monkeypatch):
    """DeBERTa beyond its stated length (its full maps kept up to MAX_FULL_T tokens, lowered here)."""
    pytest.importorskip("transformers")
    import attnviz.hf.capture as cap
    from tests.hf.factories import TEXT

    win = open_deberta(make_window, qtbot, tmp_path)
    qtbot.waitUntil(lambda: win.walkthrough is not None, timeout=60000)
    for name in ("TokenLinesView", "ModelView"):
        win.views_area.build(name)
    n = len(win.trace.tokens)
    monkeypatch.setattr(cap, "MAX_FULL_T", n)  # the shown input fits; the file's text does not
    f = tmp_path / "long.txt"
    f.write_text(TEXT, encoding="utf-8")
    with qtbot.waitSignal(win.notice_shown, timeout=60000) as got:
        assert win.input_panel.open_text_file(str(f))  # read: the model refuses it
    text, level = got.args
    assert f"up to {n:,} tokens" in text and "Traceback" not in text and "\n" not in text
    assert win.notice.isVisible() and win.trace is None
    for name in ("TokenLinesView", "ModelView"):  # a hidden dock is given the refusal when it is shown
        win.views_area.docks[name].raise_()
    win.tabs.setCurrentWidget(win.walkthrough_page)
    for w in (win.walkthrough.steps, win.walkthrough.matrix):
        win.walkthrough.setCurrentWidget(w)
        qtbot.waitUntil(lambda w=w: w.empty_reason is not None, timeout=10000)
    win.tabs.setCurrentWidget(win.views_area)
    qtbot.waitUntil(lambda: all(_view(win, n).empty_reason for n in ("TokenLinesView", "ModelView", "HeadMapView")),
                    timeout=10000)
    for where, said in _empty_texts(win).items():
        assert "refused" in said and f"up to {n:,} tokens" in said, f"{where} says {said!r}"
        assert "no input yet" not in said and "load a model" not in said
    said = win.prediction_panel.title.text()  # the prediction panel too, not "run a model"
    assert "refused" in said and "run a model" not in said, said
    # the control: a text within the length after the refusal is shown, and no view speaks of the refusal
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.run_text("the dog sat")
    assert all(v.empty_reason is None for v in win.views_area.visible_views())
    win.views_area.docks["HeadMapView"].raise_()  # token lines had hidden it: it takes the trace when shown
    qtbot.waitUntil(lambda: "refused" not in _view(win, "HeadMapView").heatmap.title.text, timeout=30000)
    win.tabs.setCurrentWidget(win.walkthrough_page)  # the walkthrough takes the trace when it is on screen
    for w in (win.walkthrough.steps, win.walkthrough.matrix):
        win.walkthrough.setCurrentWidget(w)
        qtbot.waitUntil(lambda w=w: w.trace is win.trace and w.empty_reason is None, timeout=30000)


def test_a_model_switch_clears_the_views_without_a_refusal(make_window, qtbot, tmp_path):
    """The control of the reason: a view cleared for no refusal still says "no input yet"."""
    win = _ready(make_window, qtbot)
    win.clear_shown()
    head_map = _view(win, "HeadMapView")
    assert head_map.trace is None and head_map.empty_reason is None
    assert head_map.heatmap.title.text == "no input yet"
    assert win.prediction_panel.title.text() == "Prediction: run a model"
