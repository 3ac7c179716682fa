"""File ▸ Open text… shows the file from its first line: a long text is cut to the model's positions from
its start, and the box scrolled to the end showed the part the model never read (a 17,423-token file on a
4,096-position model, seen at 1920×1080). Step still appends at the end and shows it."""

from __future__ import annotations

LINE = "the dog sat on the mat because it was tired\n"


def _ready(make_window, qtbot):
    win = make_window(start=False, model="tiny-decoder", text="the cat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    win.show()
    qtbot.waitExposed(win)
    return win


def test_an_opened_file_is_shown_from_its_first_line(make_window, qtbot, tmp_path):
    win = _ready(make_window, qtbot)
    f = tmp_path / "long.txt"
    f.write_text("first line\n" + LINE * 200, encoding="utf-8")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        assert win.input_panel.open_text_file(str(f))
    edit = win.input_panel.edit
    assert edit.verticalScrollBar().maximum() > 0  # the text is taller than the box
    assert edit.textCursor().position() == 0 and edit.verticalScrollBar().value() == 0


def test_appending_a_step_still_shows_the_end(make_window, qtbot):  # the negative control
    win = _ready(make_window, qtbot)
    panel = win.input_panel
    panel.set_text(LINE * 200, submit=False)
    panel.append_token("x", "char")
    assert panel.edit.textCursor().position() == len(panel.edit.toPlainText())
    assert panel.edit.verticalScrollBar().value() == panel.edit.verticalScrollBar().maximum() > 0
