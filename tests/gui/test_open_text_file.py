"""File ▸ Open text…: a file's whole text runs like typed text; a file that is not UTF-8 text is a visible notice."""

from __future__ import annotations


def _ready(make_window, qtbot):
    win = make_window(start=False, model="tiny-decoder", text="the cat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    return win


def test_open_text_runs_the_files_text(make_window, qtbot, tmp_path):
    win = _ready(make_window, qtbot)
    assert "open_text" in win.actions_ and win.actions_["open_text"].text() == "Open &text…"
    f = tmp_path / "doc.txt"
    f.write_bytes("\ufeffthe dog sat".encode("utf-8"))  # a byte-order mark is not part of the text
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        assert win.input_panel.open_text_file(str(f))
    assert win.input_panel.text == "the dog sat"
    assert "".join(got.args[0].tokens) == "the dog sat"


def test_a_bad_text_file_is_a_notice_and_keeps_the_input(make_window, qtbot, tmp_path):
    win = _ready(make_window, qtbot)
    f = tmp_path / "latin1.txt"
    f.write_bytes(b"caf\xe9")
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        assert not win.input_panel.open_text_file(str(f))
    text, level = got.args
    assert "not UTF-8" in text and "Traceback" not in text and level == "warning"
    assert win.notice.isVisible()
    assert win.input_panel.text == "the cat"
