"""The last session's model opens again only if it still exists: a folder deleted since (e.g. a
benchmark's temporary one) must not greet the user with a "cannot load" notice over empty views."""

from __future__ import annotations


def test_a_gone_folder_is_forgotten_and_a_bundled_name_or_a_folder_is_kept(make_window, tmp_path):
    win = make_window(start=False)
    win.settings.last_model = str(tmp_path / "deleted-since")
    assert win.startup.remembered_model() == ""
    win.settings.last_model = "tiny-encoder"  # a bundled model (the tests' assets)
    assert win.startup.remembered_model() == "tiny-encoder"
    folder = tmp_path / "mine"
    folder.mkdir()
    win.settings.last_model = str(folder)
    assert win.startup.remembered_model() == str(folder)


def test_the_window_opens_on_a_remembered_model_that_exists(make_window, qtbot):
    first = make_window(start=False)
    first.settings.last_model = "tiny-decoder"
    first.settings.sync()
    win = make_window()
    qtbot.waitUntil(lambda: win.loaded is not None, timeout=60000)
    assert win.loaded.name == "tiny-decoder"
