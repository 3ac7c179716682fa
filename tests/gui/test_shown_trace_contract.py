"""One state for what is shown: after every model switch, each view, panel and hidden dock holds the
current trace or nothing — never another model's or input's.

Walks every bundled model and a tiny Hugging Face model in sequence, forwards then backwards, with
the Walkthrough built (so its hidden widgets are checked too). Between a model's load and its first
trace every view is empty.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.io import bundled_models


def _holds(obj) -> object:
    return getattr(obj, "trace", None)


def _check_current(win) -> None:
    trace = win.trace
    assert trace is not None
    assert trace.kind == win.loaded.config.kind
    for view in win.views_area.views:
        assert _holds(view) in (None, trace), f"{type(view).__name__} holds another trace"
        if hasattr(view, "filters"):  # patch filters come from this trace or not at all
            if "emb.patch_weight" in trace and _holds(view) is trace:
                np.testing.assert_array_equal(view.filters, np.asarray(trace["emb.patch_weight"], np.float64))
            else:
                assert view.filters is None
    assert win.prediction_panel._trace is trace
    strip = win.input_panel.strip.strip.data
    if trace.kind == "encoder-decoder":
        assert list(strip.tokens) == list(trace.src_tokens)
    elif trace.kind != "vit":
        assert list(strip.tokens) == list(trace.tokens)
    if win.walkthrough is not None:
        for w in (win.walkthrough.steps, win.walkthrough.matrix):
            assert _holds(w) in (None, trace), f"{type(w).__name__} holds another trace"
        assert win.walkthrough.whatif.loaded is win.loaded


def _check_cleared(win) -> None:
    assert win.trace is None
    for view in win.views_area.views:
        assert _holds(view) is None, f"{type(view).__name__} still shows the previous model"
    assert win.prediction_panel._trace is None and win.prediction_panel.bars.entries == []
    assert win.input_panel.strip.strip.data.tokens == []
    if win.walkthrough is not None:
        for w in (win.walkthrough.steps, win.walkthrough.matrix):
            assert _holds(w) is None


@pytest.fixture
def real_models(monkeypatch, assets):
    monkeypatch.delenv("ATTNVIZ_ASSETS", raising=False)  # the bundled models of the checkout
    names = bundled_models()
    if len(names) < 2:
        pytest.skip("bundled models are not built (make assets)")
    return names


def test_every_view_follows_every_model_switch(make_window, qtbot, tmp_path, real_models):
    from tests.hf.factories import make_model

    hf = str(make_model("bert", tmp_path / "bert"))
    sequence = [*real_models, hf]
    win = make_window(model=sequence[0])
    qtbot.waitUntil(lambda: win.trace is not None and win.walkthrough is not None, timeout=180000)
    win.tabs.setCurrentWidget(win.walkthrough_page)  # fed once: from now on it is a hidden tab
    win.tabs.setCurrentWidget(win.views_area)
    cleared = []
    win.model_loaded.connect(lambda _ref: cleared.append(_check_cleared(win) or True))
    for ref in [*sequence[1:], *sequence[-2::-1]]:  # forwards, then back to the first
        cleared.clear()
        with qtbot.waitSignal(win.trace_shown, timeout=120000):
            win.load_model(ref)
        qtbot.waitUntil(lambda: not win.lane.busy, timeout=60000)
        assert cleared == [True], f"views were not cleared when {ref} loaded"
        _check_current(win)
        kind = win.loaded.config.kind
        if kind != "vit" and ref in real_models:  # each model opens on its own task's example
            from attnviz.runtime import task_of

            task = task_of(win.loaded)
            assert win.input_panel.examples == [e for e in task.examples() if isinstance(e, str)]
            assert win.input_panel.text == task.example_input()


def test_a_failed_run_clears_every_view_with_a_notice(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None and not win.lane.busy, timeout=60000)
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.run_text("   ")  # the model refuses an empty text
    assert "empty" in got.args[0]
    _check_cleared(win)
