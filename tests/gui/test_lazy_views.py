"""Start-up builds only the views on screen: a hidden (tabbed) view is built when first shown, with the
current trace, and the rest in idle time once start-up is over. The stored opening trace is drawn before
the model's load is even asked for."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.checkpoint import save_checkpoint
from attnviz.models.registry import build_model
from attnviz.runtime.opening import write_opening_trace
from attnviz.tasks import get_task


def test_hidden_views_wait_until_shown_and_then_show_the_current_trace(make_window, qtbot):
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    at_ready = {}
    win.views_ready.connect(lambda: at_ready.update(unbuilt=win.views_area.unbuilt(),
                                                    built=[type(v).__name__ for v in win.views_area.views],
                                                    merged=win.views_area.merged))
    with qtbot.waitSignal(win.views_ready, timeout=60000):
        win.start()
    area = win.views_area
    # the front tab of each group is built, the tabs behind it are placeholders
    # (a compact window, this test's 800-line screen, tabs the whole model's group into the head map's)
    assert set(at_ready["built"]) == ({"HeadMapView"} if at_ready["merged"] else {"HeadMapView", "ModelView"})
    assert "RolloutView" in at_ready["unbuilt"] and "TokenLinesView" in at_ready["unbuilt"]
    assert set(area.docks) == set(at_ready["built"]) | set(at_ready["unbuilt"])  # every dock exists
    qtbot.waitUntil(lambda: win.trace is not None, timeout=60000)
    # built on being raised, or earlier in idle time (a fast machine): either way, behind its tab it waits
    # for the trace until it is brought forward (a hidden view draws no keystroke)
    area.docks["RolloutView"].raise_()
    view = area.docks["RolloutView"].widget()
    assert type(view).__name__ == "RolloutView" and view in area.views
    qtbot.waitUntil(lambda: view.trace is win.trace, timeout=10000)


def test_the_remaining_views_are_built_in_idle_time_with_the_shown_trace_rules(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.warm, timeout=120000)
    area = win.views_area
    qtbot.waitUntil(lambda: not area.unbuilt(), timeout=60000)
    assert len(area.views) == len(area.docks)
    for name, dock in area.docks.items():
        view = dock.widget()
        assert view in area.views, name
        # on screen: the current trace; behind a tab: the current trace or nothing, never another one
        assert view.trace in (None, win.trace), name
    for view in area.visible_views():
        assert view.trace is win.trace


def test_the_stored_opening_trace_is_drawn_before_the_model_load_is_asked_for(make_window, qtbot, tmp_path,
                                                                              monkeypatch):
    task = get_task("coref")
    cfg = task.model_config(d_model=16, n_heads=2)
    torch.manual_seed(0)
    folder = save_checkpoint(tmp_path / "models" / "coref", build_model(cfg).eval(), cfg,
                             {"task": "coref", **task.info()}, tokenizer=task.tokenizer)
    write_opening_trace(folder)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(tmp_path))
    win = make_window(start=False, model="coref")
    seen = []
    win.trace_shown.connect(lambda t: seen.append((t, win.loaded, win.lane.busy, win.selection.state)))
    win.start()
    qtbot.waitUntil(lambda: len(seen) >= 2, timeout=120000)
    stored, loaded, busy, first_state = seen[0]
    assert stored.meta.get("opening_text") and loaded is None and not busy  # no model job queued yet
    live, live_loaded, _, live_state = seen[1]
    assert live_loaded is not None and live.tokens == stored.tokens
    np.testing.assert_allclose(live["L0.probs"], stored["L0.probs"], atol=1e-6)
    # the stored trace opens on the model's own starting view, so the live one changes nothing on screen
    focus = stored.meta.get("focus") or {}
    if "layer" in focus:
        assert (first_state.layer, first_state.head) == (focus["layer"], focus["head"])
    assert (live_state.layer, live_state.head, live_state.query, live_state.part) == \
        (first_state.layer, first_state.head, first_state.query, first_state.part)


def test_an_idle_view_off_screen_is_made_in_one_turn_and_docked_in_the_next(make_window, qtbot):
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    win.warmed_up.disconnect(win.build_remaining_views)  # this test builds the remaining views by hand
    with qtbot.waitSignal(win.views_ready, timeout=60000):
        win.start()
    qtbot.waitUntil(lambda: win.trace is not None, timeout=60000)
    area = win.views_area
    hidden = [n for n in area.unbuilt() if not area.on_screen(n)]
    assert "RolloutView" in hidden
    made = area.build_next()
    name = type(made).__name__
    placeholder = area.docks[name].widget()
    assert placeholder is not made and made not in area.views and name in area.unbuilt()  # made, not docked
    assert area.build_next() is made  # the next call docks it
    assert area.docks[name].widget() is made and made in area.views and name not in area.unbuilt()
    assert made.trace is None  # behind its tab: the trace waits until it is brought forward
    # one made but not docked yet is docked at once when its tab is brought forward
    made = area.build_next()
    name = type(made).__name__
    area.docks[name].raise_()
    qtbot.waitUntil(lambda: area.docks[name].widget() is made and made.trace is win.trace, timeout=10000)
    assert name not in area.unbuilt()
