"""Shared by the tests of a model beyond its stated length: the app on a tiny DeBERTa-v2 (its full maps are kept
up to ``attnviz.hf.capture.MAX_FULL_T`` tokens: its disentangled terms cannot be recomputed from q and k)."""

from __future__ import annotations


def open_deberta(make_window, qtbot, tmp_path):
    """A window on a tiny DeBERTa-v2 folder, its first input ("the cat sat") shown."""
    from tests.hf.factories import make_model

    folder = make_model("deberta-v2", tmp_path / "deberta", max_pos=64)
    win = make_window(start=False, model=str(folder), text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=90000):
        win.start()
    return win
