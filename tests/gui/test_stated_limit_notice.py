"""DeBERTa-v2 in the app beyond its stated length (full maps up to MAX_FULL_T tokens, its disentangled terms cannot
be recomputed from q and k): one visible notice line, no traceback, and no map of the earlier input left
on screen as if it were this one's. The limit is
lowered for the test; the same text within it is shown (control)."""

from __future__ import annotations

import pytest

from deberta_window import open_deberta
from tests.hf.factories import TEXT


def test_beyond_the_stated_length_is_a_visible_notice(make_window, qtbot, tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    import attnviz.hf.capture as cap

    win = open_deberta(make_window, qtbot, tmp_path)
    before = win.trace
    n = len(before.tokens)
    monkeypatch.setattr(cap, "MAX_FULL_T", n)  # the shown input fits; the longer one below does not
    with qtbot.waitSignal(win.notice_shown, timeout=60000) as got:
        win.run_text(TEXT)
    text, level = got.args
    assert "computes attention in its own code" in text and f"up to {n:,} tokens" in text
    assert f"shorten the input to {n:,} tokens or fewer" in text  # what to do about it (issue 36)
    assert "views are empty until an input runs" in text  # why the views show nothing
    assert "Traceback" not in text and "\n" not in text and level in ("warning", "error")
    assert win.notice.isVisible()
    assert win.trace is None  # the views show nothing rather than the earlier input's maps
    with qtbot.waitSignal(win.trace_shown, timeout=60000):  # control: within the length it is shown
        win.run_text("the dog sat")
    assert win.trace is not None and win.trace is not before and not win.notice.isVisible()
