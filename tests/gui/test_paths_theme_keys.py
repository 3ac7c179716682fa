"""`attnviz PATH…` in the window, the system colour scheme, standard keys and Help ▸ Keyboard shortcuts."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QKeySequence, QPalette

from attnviz.errors import AttnvizError
from attnviz.gui.open_paths import open_paths, plan_paths
from attnviz.gui.settings import AppSettings

SENTENCES = ["the animal did not cross the street because it was too tired",
             "the cat sat on the mat and it was happy"]  # words the tiny models' vocabulary knows


def _saved_trace(path, model_dir, text, marker="from the file"):
    from attnviz.runtime import load_model, run_trace

    trace = run_trace(load_model(model_dir), text=text)
    trace.meta["marker"] = marker  # tells the saved trace from a re-run of the same input
    trace.save(path)
    return trace


def test_plan_paths_picks_model_image_and_trace(assets, tmp_path):
    from PIL import Image

    img = tmp_path / "photo.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (16, 16, 3), dtype=np.uint8)).save(img)
    # an image alone opens with a bundled vision model (the tiny assets have no `shapes`: the first ViT)
    plan = plan_paths([str(img)], last_model="tiny-encoder")
    assert plan.model == "tiny-vit" and plan.image == str(img.resolve())
    # ...but keeps the last model when that is a vision model already
    assert plan_paths([str(img)], last_model="tiny-vit").model == "tiny-vit"
    folder = assets / "models" / "tiny-decoder"
    plan = plan_paths([str(folder), str(folder / "config.json")])
    assert plan.model == str(folder.resolve()) and plan.extra_models == [str(folder.resolve())]
    saved = tmp_path / "t.npz"
    _saved_trace(saved, assets / "models" / "tiny-encoder", SENTENCES[1])
    plan = plan_paths([str(saved)])
    assert plan.text == SENTENCES[1] and plan.later == [("trace", str(saved.resolve()))]
    with pytest.raises(AttnvizError, match="no such file"):
        plan_paths([str(tmp_path / "missing.png")])


def test_a_saved_trace_opens_with_its_own_numbers(make_window, qtbot, assets, tmp_path):
    saved = tmp_path / "t.npz"
    original = _saved_trace(saved, assets / "models" / "tiny-encoder", SENTENCES[1])
    plan = plan_paths([str(saved)], model=str(assets / "models" / "tiny-encoder"))
    win = make_window(start=False, model=plan.model, text=plan.text)
    open_paths(win, plan)
    win.start()
    qtbot.waitUntil(lambda: win.trace is not None and win.trace.meta.get("marker") == "from the file",
                    timeout=60000)
    assert win.trace.tokens == original.tokens
    np.testing.assert_array_equal(win.trace["L1.probs"], original["L1.probs"])
    assert win.input_panel.text == SENTENCES[1]  # the input panel shows what the trace was made from
    qtbot.waitUntil(lambda: all(v.trace is win.trace for v in win.views_area.visible_views()), timeout=30000)
    strip = win.input_panel.strip.strip.data
    assert strip.tokens == original.tokens and -1 not in strip.ids  # the trace's own tokens, the same model's IDs


def test_a_saved_trace_of_another_model_shows_its_tokens_not_the_loaded_models(make_window, qtbot, assets, tmp_path):
    """The input strip does not keep the loaded model's tokens of another input (or invent IDs for the trace's),
    and the notice says why it is empty."""
    saved = tmp_path / "t.npz"
    _saved_trace(saved, assets / "models" / "tiny-decoder", SENTENCES[0])
    plan = plan_paths([str(saved)])
    plan.model = str(assets / "models" / "tiny-encoder")  # another model than the one that made the trace
    win = make_window(start=False, model=plan.model, text=SENTENCES[1])
    open_paths(win, plan)
    win.start()
    qtbot.waitUntil(lambda: win.trace is not None and win.trace.meta.get("marker") == "from the file",
                    timeout=60000)
    assert win.input_panel.strip.strip.data.tokens == []
    assert "tokenizer is not loaded" in win.notice.text and "tiny-decoder" in win.notice.text


def test_theme_follows_the_system_until_one_is_chosen(make_window, qapp, monkeypatch):
    import attnviz.gui.settings as settings_mod

    win = make_window(start=False)
    assert win.settings.theme_choice == "system" and win.actions_["theme_system"].isChecked()
    assert win.settings.theme == settings_mod.system_theme()

    def lightness():
        return qapp.palette().color(QPalette.ColorRole.Window).lightness()

    try:
        monkeypatch.setattr(settings_mod, "system_theme", lambda: "dark")  # the desktop turns dark
        win.scheme_follower.scheme_changed()
        assert lightness() < 80 and win.settings.theme == "dark" and win.view_style is not None
        win.actions_["theme_light"].trigger()  # the menu overrides the system
        assert lightness() > 80 and AppSettings().theme_choice == "light"
        win.scheme_follower.scheme_changed()  # a chosen theme stays
        assert lightness() > 80
        win.actions_["theme_system"].trigger()
        assert lightness() < 80
    finally:
        monkeypatch.undo()
        win.set_theme("light")  # leave the shared QApplication palette as it was


def test_standard_keys_and_the_shortcuts_dialog(make_window):
    from attnviz.gui.dialogs.shortcuts_dialog import ShortcutsDialog, shortcut_rows

    win = make_window(start=False)
    for name, standard in (("open_model", QKeySequence.StandardKey.Open), ("quit", QKeySequence.StandardKey.Quit),
                           ("full_screen", QKeySequence.StandardKey.FullScreen)):
        expected = QKeySequence.keyBindings(standard)
        if expected:  # the platform defines one: the action uses exactly it
            assert win.actions_[name].shortcuts() == expected, name
        else:
            assert not win.actions_[name].shortcut().isEmpty(), name
    rows = dict(shortcut_rows(win.actions_))
    assert rows["Export figure"] == "Ctrl+E" and rows["Next layer"] == "Alt+Down"
    assert "Keyboard shortcuts" in rows
    with_keys = [a for a in win.actions_.values() if not a.shortcut().isEmpty()]
    assert len(rows) == len(with_keys) + 1  # every key of the window is listed, and the clicker's keys
    assert rows["Presenting: next / previous step, part or lesson scene"] == "Page Down / Page Up"
    box = ShortcutsDialog(win.actions_, win)
    assert box.table.rowCount() == len(rows)
    assert box.table.item(0, 1).text() == shortcut_rows(win.actions_)[0][1]
    box.deleteLater()


def test_the_shortcuts_dialog_shows_every_row_and_no_bare_key_words(make_window, qtbot):
    """Every row visible without scrolling at 1920×1080 (the Page Down row fell below a fixed 640 px), and no
    dedicated-key words ("Ctrl+O or Open", "F1 or Help") that read as actions. Control: the table really has
    the rows, and its viewport would be too short at the old 640 px."""
    from attnviz.gui.dialogs.shortcuts_dialog import ShortcutsDialog, shortcut_rows

    win = make_window(start=False)
    keys = dict(shortcut_rows(win.actions_))
    assert not [k for k in keys.values() if any(w in k.split(" or ") for w in ("Open", "Help", "Quit", "Save"))]
    box = ShortcutsDialog(win.actions_, win)
    qtbot.addWidget(box)
    font = box.font()
    font.setPixelSize(18)  # a large desktop font (rows ~30 px on the 1920×1080 screen it was seen on)
    box.setFont(font)
    box.show()
    qtbot.waitExposed(box)
    table = box.table
    last = table.rowCount() - 1
    assert table.item(last, 1).text() == "Page Down / Page Up"
    bottom = table.rowViewportPosition(last) + table.rowHeight(last)
    assert bottom <= table.viewport().height(), (bottom, table.viewport().height())
    assert table.verticalHeader().length() + table.horizontalHeader().height() > 640 - 80  # a fixed 640 px cut it
