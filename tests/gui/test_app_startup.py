"""Start-up: the window opens with a model and an example on screen; settings persist, in their own file."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar

from attnviz.gui.window.main_window import FALLBACK_TEXT
from attnviz.gui.settings import AppSettings


def test_opens_a_bundled_model_with_an_example(make_window, qtbot):
    win = make_window(start=False)
    assert "attnviz" in win.windowTitle()
    with qtbot.waitSignal(win.trace_shown, timeout=60000) as got:
        win.start()
    trace = got.args[0]
    # no model asked for and none remembered: the first bundled one (coref is absent in the tiny assets)
    assert win.loaded.name == "tiny-bpe"
    assert win.input_panel.text == FALLBACK_TEXT
    assert trace.meta["input_text"] == FALLBACK_TEXT
    assert "tiny-bpe" in win.windowTitle() and "attnviz" in win.windowTitle()
    qtbot.waitUntil(lambda: win.model_panel.names() == ["tiny-bpe", "tiny-decoder", "tiny-encoder", "tiny-vit"],
                    timeout=30000)
    qtbot.waitUntil(lambda: bool(win.views_area.views), timeout=30000)
    # every view on screen got the very trace the prediction panel shows
    shown = win.views_area.visible_views()
    assert shown and all(v.trace is trace for v in shown)
    assert win.prediction_panel.mode == "classes"
    # tabbed docks show whole names ("Attention distance", not "Attentio…") and scroll when crowded
    qtbot.waitUntil(lambda: bool(win.views_area.findChildren(QTabBar)), timeout=5000)
    qtbot.waitUntil(lambda: all(b.elideMode() == Qt.TextElideMode.ElideNone
                                for b in win.views_area.findChildren(QTabBar)), timeout=5000)


def test_command_line_model_and_text_win(make_window, qtbot):
    win = make_window(start=False, model="tiny-encoder", text="the cat sat on the mat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000) as got:
        win.start()
    assert got.args[0].tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat"]


def test_settings_live_in_the_isolated_file(isolated_settings):
    s = AppSettings()
    assert s.file_name == str(isolated_settings)
    s.colormap = "cividis"
    s.sync()
    assert "cividis" in isolated_settings.read_text()


def test_recent_lists_keep_order_and_limit(isolated_settings):
    s = AppSettings()
    for i in range(12):
        s.add_recent("models", f"/m/{i}")
    s.add_recent("models", "/m/5")  # reopening moves it to the front, without a duplicate
    got = s.recent("models")
    assert got[0] == "/m/5" and len(got) == 8 and len(set(got)) == 8
    assert got[1:4] == ["/m/11", "/m/10", "/m/9"]


@pytest.fixture
def light_theme_after(qapp):
    """Put the shared QApplication palette back to light even when the test fails half-way (a dark
    palette left behind failed the next test too)."""
    yield
    from attnviz.gui.theme import apply_theme

    apply_theme(qapp, "light")


def test_model_colour_map_theme_and_layout_persist(make_window, qtbot, assets, light_theme_after):
    win = make_window(model="tiny-decoder", text="the cat")
    # every view on screen built: one built later could still grow the window's minimum size
    qtbot.waitUntil(lambda: win.trace is not None and win.views_installed, timeout=60000)
    win.actions_["cmap_magma"].trigger()
    win.actions_["theme_dark"].trigger()
    win.resize(win.width(), 700)  # the offscreen screen is 800 px high: restoring clamps to it
    win.docks["PredictionDock"].close()
    qtbot.wait(50)
    # what the window really became: its views' minimum height may be a few pixels above 700, and it
    # depends on which views idle building has made by now
    height = win.height()
    win.close()
    assert AppSettings().layout("geometry") is not None

    again = make_window(start=False)
    assert again.height() == height
    assert again.docks["PredictionDock"].isHidden() and not again.docks["ModelDock"].isHidden()
    assert again.settings.colormap == "magma" and again.actions_["cmap_magma"].isChecked()
    assert again.actions_["theme_dark"].isChecked()
    with qtbot.waitSignal(again.model_loaded, timeout=60000) as got:
        again.start()
    assert got.args[0] == "tiny-decoder"  # the last model comes back
    qtbot.waitUntil(lambda: bool(again.views_area.views), timeout=30000)
    assert {v.style.cmap for v in again.views_area.views} == {"magma"}
    assert {v.style.background for v in again.views_area.views} == {"#1b1b1f"}


def test_dark_theme_changes_the_palette(make_window, qapp):
    from PySide6.QtGui import QPalette

    win = make_window(start=False)
    light = qapp.palette().color(QPalette.ColorRole.Window).lightness()
    win.set_theme("dark")
    dark = qapp.palette().color(QPalette.ColorRole.Window).lightness()
    win.set_theme("light")
    assert dark < 80 < light


@pytest.mark.parametrize("missing", ["text", "image"])
def test_vision_model_first_input_is_an_image(make_window, qtbot, missing, tmp_path):
    from PIL import Image

    path = tmp_path / "red.png"
    arr = np.zeros((24, 24, 3), np.uint8)
    arr[6:18, 6:18, 0] = 255
    Image.fromarray(arr).save(path)
    kwargs = {"image": str(path)} if missing == "text" else {}
    win = make_window(start=False, model="tiny-vit", **kwargs)
    if missing == "image":
        # no example and no image given: the window waits for one instead of inventing an input
        with qtbot.waitSignal(win.model_loaded, timeout=60000):
            win.start()
        assert win.input_panel.mode == "image" and win.trace is None
        with qtbot.waitSignal(win.trace_shown, timeout=30000):
            win.input_panel.image.submit(arr)
    else:
        with qtbot.waitSignal(win.trace_shown, timeout=60000):
            win.start()
    assert win.trace.grid == (4, 4)
    assert win.input_panel.strip.isHidden()
    assert not win.input_panel.image.preview.pixmap().isNull()


def test_pages_wait_for_the_first_map_and_follow_a_failed_load(make_window, qtbot, tmp_path):
    ok = make_window(start=False, model="tiny-encoder")
    with qtbot.waitSignal(ok.trace_shown, timeout=60000):
        ok.start()
    qtbot.waitUntil(lambda: ok.training is not None and ok.walkthrough is not None, timeout=60000)
    # a first model that cannot load: the notice says why, and the Training page is still built
    # (training a model is the way on from there)
    bad = make_window(start=False, model=str(tmp_path / "no-such-model"))
    with qtbot.waitSignal(bad.notice_shown, timeout=60000) as got:
        bad.start()
    assert got.args[1] == "error" and "cannot load the model" in got.args[0]
    qtbot.waitUntil(lambda: bad.training is not None, timeout=60000)
    assert bad.trace is None


def test_building_the_window_imports_no_numpy_torch_or_analysis():
    """The window paints before the heavy imports start (they run on workers afterwards): importing the
    main window and the app must not pull in numpy, torch, pyqtgraph or the analyses."""
    import subprocess
    import sys

    code = ("import sys; import attnviz.gui.app, attnviz.gui.window.main_window; "
            "print(sorted(m for m in ('numpy', 'torch', 'pyqtgraph', 'attnviz.analysis', 'attnviz.capture') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_first_maps_turn_imports_no_lesson_code():
    """The stored opening trace's turn is the start-up's worst freeze: a handler of every shown trace imported
    the lessons package there although no scene was waiting (20 of that turn's 110 ms of CPU)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os, sys, tempfile
        os.environ["ATTNVIZ_SETTINGS"] = os.path.join(tempfile.mkdtemp(), "s.ini")
        from attnviz.gui.app import create_application
        from attnviz.gui.window.main_window import MainWindow
        app = create_application()
        win = MainWindow()
        seen = []
        def shown(trace):
            if not seen:
                seen.append(win.loaded is None)
                print("OPENING", seen, "CLAIMS", "attnviz.lessons.claims" in sys.modules, flush=True)
                app.quit()
        win.trace_shown.connect(shown)
        win.show()
        app.exec()
    """)
    env = {**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    # the stored trace, before the model loaded; the lesson claims (scene selections) not imported
    assert "OPENING [True] CLAIMS False" in out.stdout, out.stdout + out.stderr
