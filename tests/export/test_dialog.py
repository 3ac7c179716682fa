"""The app's Export… dialog and clipboard copy: same figure code, chosen size and slide style."""

import numpy as np
import pytest
from PIL import Image

from attnviz.errors import AttnvizError
from attnviz.gui.dialogs.export_dialog import ExportDialog, copy_current_view, export_current_view
from attnviz.gui.views.head_map_view import HeadMapView
from attnviz.bench.traces import sample_trace
from attnviz.selection import Selection, SelectionState


@pytest.fixture
def shown_view(qtbot):
    trace = sample_trace("decoder", T=8)
    sel = Selection(SelectionState(layer=1, head=2))
    view = HeadMapView(sel)
    qtbot.addWidget(view)
    view.set_trace(trace)
    view.resize(500, 400)  # the window size must not matter for the file
    return view, trace, sel


def test_dialog_presets_and_options(qtbot):
    d = ExportDialog("hm.png", title="Layer 1")
    qtbot.addWidget(d)
    d.preset.setCurrentText("4:3")
    assert (d.width.value(), d.height.value()) == (1600, 1200) and not d.width.isEnabled()
    d.preset.setCurrentText("custom")
    d.width.setValue(640)
    d.height.setValue(480)
    opts = d.options()
    assert (opts.width, opts.height, opts.title) == (640, 480, "Layer 1")
    d.theme.setCurrentText("presentation")
    assert d.style().font_scale > 1.5 and d.style().cmap == "viridis"


def test_export_current_view_redraws_at_the_chosen_size(shown_view, tmp_path, qtbot):
    view, trace, sel = shown_view
    d = ExportDialog("hm.png")
    qtbot.addWidget(d)
    d.preset.setCurrentText("custom")
    d.width.setValue(900)
    d.height.setValue(600)
    out = export_current_view(view, trace, sel.state, tmp_path / "hm.svg", d.options(), d.style())
    text = out.read_text()
    assert "<text" in text and trace.tokens[3] in text
    png = export_current_view(view, trace, sel.state, tmp_path / "hm.png", d.options(), d.style())
    with Image.open(png) as im:
        assert im.size == (900, 600)
        px = np.asarray(im.convert("RGB"))
    assert px[5, 5].tolist() == [255, 255, 255]  # light slide background
    assert view.size().width() == 500  # the on-screen view was not touched


def test_copy_to_clipboard(shown_view, qtbot):
    view, trace, sel = shown_view
    img = copy_current_view(view, trace, sel.state)
    from PySide6.QtWidgets import QApplication

    assert QApplication.clipboard().image().size() == img.size() and img.width() == 1920


def test_bad_size_is_refused(qtbot):
    d = ExportDialog()
    qtbot.addWidget(d)
    d.scale.setValue(0.25)
    d.preset.setCurrentText("custom")
    d.width.setValue(16)
    d.height.setValue(16)
    d.options()  # the smallest allowed figure is fine
    from attnviz.figures.render import ExportOptions

    with pytest.raises(AttnvizError):
        ExportOptions(width=20000, height=10).validate()


def test_main_window_export_and_copy(qtbot, tmp_path, monkeypatch):
    """File ▸ Export… writes the current view; Copy figure fills the clipboard."""
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.dialogs import export_dialog as dialog_mod
    from attnviz.gui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    trace = sample_trace("encoder", T=6)
    view = HeadMapView(win.selection)
    qtbot.addWidget(view)
    view.set_trace(trace)
    win.trace = trace
    monkeypatch.setattr(win, "current_figure", lambda: view)
    out = tmp_path / "fig.svg"

    def fake_exec(self):
        self.path.setText(str(out))
        return dialog_mod.ExportDialog.Accepted

    monkeypatch.setattr(dialog_mod.ExportDialog, "exec", fake_exec)
    notices = []
    win.notice_shown.connect(lambda text, level: notices.append((str(text), level)))
    win.export_figure()  # runs in steps: done when its notice comes
    qtbot.waitUntil(lambda: bool(notices), timeout=30000)
    assert notices == [(f"exported {out}", "info")]
    assert out.exists() and trace.tokens[2] in out.read_text()
    win.copy_figure()
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=30000)
    assert notices[1] == ("figure copied to the clipboard (1920×1080)", "info")
    assert QApplication.clipboard().image().width() == 1920
