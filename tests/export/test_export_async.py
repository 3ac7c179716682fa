"""The app's Export figure… / Copy figure run in steps with the window answering: same files as the
synchronous export, written atomically, errors as notices, one export at a time."""

import re
import threading
import zlib

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

import attnviz.figures.render as render
from attnviz.bench.traces import sample_trace
from attnviz.gui.dialogs.export_dialog import export_current_view
from attnviz.figures.render import ExportOptions
from attnviz.figures.registry import export_style
from attnviz.gui.window import figure_actions
from attnviz.gui.views.head_map_view import HeadMapView

OPTS = dict(width=960, height=540, title="Layer 1 head 0", caption="a caption")


@pytest.fixture
def win(qtbot, monkeypatch):
    """A window showing a head map of a synthetic trace, with its notices recorded in ``win.notices``."""
    from attnviz.gui.window.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    trace = sample_trace("encoder", T=6)
    view = HeadMapView(w.selection)
    qtbot.addWidget(view)
    view.set_trace(trace)
    w.trace = trace
    monkeypatch.setattr(w, "current_figure", lambda: view)
    w.view = view
    w.notices = []
    w.notice_shown.connect(lambda text, level: w.notices.append((str(text), level)))
    return w


def _export(win, path, **kw):
    figure_actions.start_export(win, win.view, path, ExportOptions(**{**OPTS, **kw}), export_style())


def _wait_notice(qtbot, win, n=1):
    qtbot.waitUntil(lambda: len(win.notices) >= n, timeout=60000)
    return win.notices[n - 1]


def _pixels(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGBA"))


@pytest.mark.parametrize("view_cls", ["HeadMapView", "ModelView"])
def test_png_equals_the_synchronous_export_pixel_for_pixel(win, qtbot, tmp_path, view_cls):
    """The file the app writes in steps is the one the synchronous export (the command line's) writes."""
    if view_cls == "ModelView":  # its layout once moved when a layout request ran between the steps
        from attnviz.gui.views.model_view import ModelView

        win.view = ModelView(win.selection)
        qtbot.addWidget(win.view)
        win.view.set_trace(win.trace)
    _export(win, tmp_path / "new.png")
    assert _wait_notice(qtbot, win) == (f"exported {tmp_path / 'new.png'}", "info")
    old = export_current_view(win.view, win.trace, win.selection.state, tmp_path / "old.png",
                              ExportOptions(**OPTS), export_style())
    new_px, old_px = _pixels(tmp_path / "new.png"), _pixels(old)
    assert new_px.shape == (540, 960, 4) and len(np.unique(new_px.reshape(-1, 4), axis=0)) > 10  # not blank
    assert np.array_equal(new_px, old_px)
    assert (tmp_path / "new.png").read_bytes() == old.read_bytes()  # the same encoder on the same image


def test_svg_and_pdf_keep_text_as_text(win, qtbot, tmp_path):
    _export(win, tmp_path / "f.svg")
    _wait_notice(qtbot, win, 1)
    svg = (tmp_path / "f.svg").read_text()
    assert re.search(r"<text[^>]*>[^<]*" + re.escape(win.trace.tokens[2]), svg)
    assert "Layer 1 head 0" in svg
    _export(win, tmp_path / "f.pdf")
    assert _wait_notice(qtbot, win, 2)[1] == "info"
    data = (tmp_path / "f.pdf").read_bytes()
    assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF") and b"/Font" in data
    streams = re.findall(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S)
    pages = b"".join(zlib.decompress(s) for s in streams if s[:1] == b"x")
    assert b"BT" in pages and (b"Tj" in pages or b"TJ" in pages)  # text objects, not a picture of text


def test_the_file_appears_only_complete_and_the_window_answers_meanwhile(win, qtbot, tmp_path, monkeypatch):
    """While the worker has written the temporary file but not renamed it, the target does not exist,
    the event loop runs (a timer fires) and the Export/Copy actions are disabled."""
    target = tmp_path / "fig.png"
    written, release = threading.Event(), threading.Event()
    original = render._write_payload

    def slow(tmp, payload):
        original(tmp, payload)
        written.set()
        assert release.wait(60)

    monkeypatch.setattr(render, "_write_payload", slow)
    _export(win, target)
    ticks = []
    QTimer.singleShot(0, lambda: ticks.append("before the figure was written"))
    qtbot.waitUntil(written.is_set, timeout=60000)
    fired = []
    QTimer.singleShot(0, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired), timeout=10000)  # the loop turns while the file is being written
    assert ticks and not target.exists() and win.notices == []
    parts = [p for p in tmp_path.iterdir() if p.name.startswith(".fig.png.") and p.suffix == ".part"]
    assert len(parts) == 1 and parts[0].stat().st_size > 0  # written in full, under a temporary name
    assert not win.actions_["export"].isEnabled() and not win.actions_["copy_figure"].isEnabled()
    release.set()
    assert _wait_notice(qtbot, win)[1] == "info"
    with Image.open(target) as im:
        assert im.size == (960, 540)
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]
    assert win.actions_["export"].isEnabled() and win.actions_["copy_figure"].isEnabled()


def test_a_second_export_is_refused_while_one_runs(win, qtbot, tmp_path, monkeypatch):
    release = threading.Event()
    original = render._write_payload

    def held(tmp, payload):
        assert release.wait(60)
        original(tmp, payload)

    monkeypatch.setattr(render, "_write_payload", held)
    _export(win, tmp_path / "first.png")
    _export(win, tmp_path / "second.png")
    win.copy_figure()
    assert win.notices[:2] == [("an export is still running: wait for its notice, then try again", "info")] * 2
    release.set()
    assert _wait_notice(qtbot, win, 3) == (f"exported {tmp_path / 'first.png'}", "info")
    assert [p.name for p in tmp_path.iterdir()] == ["first.png"]


def test_a_failed_write_is_a_notice_and_keeps_the_old_file(win, qtbot, tmp_path, monkeypatch):
    target = tmp_path / "fig.png"
    target.write_bytes(b"previous figure")

    def broken(tmp, payload):
        with open(tmp, "wb") as fh:
            fh.write(b"half a fi")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(render, "_write_payload", broken)
    _export(win, target)
    text, level = _wait_notice(qtbot, win)
    assert level == "error" and "no space left on the device" in text and "Traceback" not in text
    assert target.read_bytes() == b"previous figure" and [p.name for p in tmp_path.iterdir()] == ["fig.png"]
    assert win.actions_["export"].isEnabled()


def test_a_failed_paint_and_a_bad_target_are_notices(win, qtbot, tmp_path, monkeypatch):
    _export(win, tmp_path / "fig.gif")  # refused at once, before any work
    assert win.notices == [("cannot export to fig.gif: use a .png, .svg or .pdf file name", "error")]

    def fails(*args):
        raise MemoryError

    monkeypatch.setattr("attnviz.gui.figure_export.render_payload", fails)
    _export(win, tmp_path / "fig.png")
    assert _wait_notice(qtbot, win, 2) == ("out of memory: try a shorter input or a smaller model", "error")
    assert not (tmp_path / "fig.png").exists() and win.actions_["export"].isEnabled()


def test_copy_figure_fills_the_clipboard_with_the_same_image(win, qtbot):
    win.copy_figure()
    assert _wait_notice(qtbot, win) == ("figure copied to the clipboard (1920×1080)", "info")
    from attnviz.gui.dialogs.export_dialog import copy_current_view

    got = QApplication.clipboard().image()
    want = copy_current_view(win.view, win.trace, win.selection.state)
    assert got.size() == want.size() and got.convertToFormat(want.format()) == want


def test_closing_the_window_mid_export_closes_the_figure(qtbot, tmp_path):
    """A window closed between two steps leaves nothing running and no file."""
    from attnviz.gui.window.main_window import MainWindow

    w = MainWindow()
    trace = sample_trace("encoder", T=6)
    view = HeadMapView(w.selection)
    qtbot.addWidget(view)
    view.set_trace(trace)
    w.trace = trace
    figure_actions.start_export(w, view, tmp_path / "fig.png", ExportOptions(**OPTS), export_style())
    runner = figure_actions.exporter(w)
    assert runner.busy
    runner.cancel()
    assert not runner.busy
    w.close()
    w.deleteLater()
    qtbot.wait(50)
    assert not (tmp_path / "fig.png").exists()


def test_the_event_loop_turns_between_building_and_painting(win, qtbot, tmp_path, monkeypatch):
    """Building the slide-size view and painting it are separate event-loop turns: a timer due now
    fires after the export starts and before its figure is painted."""
    import attnviz.gui.figure_export as figure_export

    order = []
    paint = figure_export.render_payload

    def painting(*args):
        order.append("paint")
        return paint(*args)

    monkeypatch.setattr(figure_export, "render_payload", painting)
    _export(win, tmp_path / "fig.svg")
    timer = QTimer()  # a timer like the export's own (a 0 ms singleShot is a posted event, always first)
    timer.setSingleShot(True)
    timer.setInterval(0)
    timer.timeout.connect(lambda: order.append("timer"))
    timer.start()
    assert order == []  # nothing is built or painted inside the click
    _wait_notice(qtbot, win)
    assert order == ["timer", "paint"] and (tmp_path / "fig.svg").exists()


def test_a_plain_widget_is_exported_at_slide_size_and_keeps_its_own(win, qtbot, tmp_path):
    """A page that is not a registered figure (the training page) is resized for painting, in a turn
    of its own, and given back its size on screen; the file is the synchronous export's."""
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    page = QWidget()
    QVBoxLayout(page).addWidget(QLabel("loss 0.25 after 100 steps"))
    qtbot.addWidget(page)
    page.resize(300, 200)
    page.show()
    figure_actions.start_export(win, page, tmp_path / "new.svg", ExportOptions(**OPTS), export_style())
    assert _wait_notice(qtbot, win)[1] == "info"
    assert page.size().width() == 300 and page.size().height() == 200 and page.updatesEnabled()
    old = export_current_view(page, win.trace, win.selection.state, tmp_path / "old.svg", ExportOptions(**OPTS),
                              export_style())
    assert page.size().width() == 300 and page.size().height() == 200 and page.updatesEnabled()
    assert (tmp_path / "new.svg").read_bytes() == old.read_bytes()
    assert "loss 0.25 after 100 steps" in old.read_text() and 'viewBox="0 0 960 540"' in old.read_text()


def test_pdf_equals_the_synchronous_export_but_for_its_dates_and_id(win, qtbot, tmp_path):
    _export(win, tmp_path / "new.pdf")
    assert _wait_notice(qtbot, win)[1] == "info"
    old = export_current_view(win.view, win.trace, win.selection.state, tmp_path / "old.pdf",
                              ExportOptions(**OPTS), export_style())

    def stamped_out(data: bytes) -> bytes:  # the creation time and a random document id differ per file
        data = re.sub(rb"\(D:\d+Z?\)", b"(D:)", data)
        data = re.sub(rb'(Date)="[^"]*"', rb'\1=""', data)
        data = re.sub(rb"/ID \[ <[0-9a-f]+> <[0-9a-f]+> \]", b"/ID", data)
        return re.sub(rb"uuid:[0-9a-f-]+", b"uuid:", data)

    new_bytes, old_bytes = (tmp_path / "new.pdf").read_bytes(), old.read_bytes()
    assert len(new_bytes) == len(old_bytes) and stamped_out(new_bytes) == stamped_out(old_bytes)
