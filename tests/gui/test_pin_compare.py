"""Pin and compare in the app (issue 35 item 6): the Compare view draws the pinned and the current trace
on one colour scale with their difference — two inputs on one model, one input on two models of the
same shape — and says so in a notice when the shapes differ. Values are checked against the traces'
own probabilities (an independent read, not the view's pairing)."""

from __future__ import annotations

import numpy as np


def _shown(win, qtbot, text):
    old = win.trace
    win.input_panel.set_text(text, submit=True)
    qtbot.waitUntil(lambda: win.trace is not None and win.trace is not old
                    and " ".join(win.trace.tokens).endswith(text.split()[-1]), timeout=30000)
    return win.trace


def _compare_view(win, qtbot):
    view = win.views_area.build("CompareView")
    qtbot.waitUntil(lambda: view.trace is win.trace, timeout=10000)  # on screen: given the current trace
    return view


def _check_maps(view, pinned, current, layer, head):
    first, second, diff = view.values
    want_first, want_second = pinned.probs(layer)[head], current.probs(layer)[head]
    np.testing.assert_allclose(first, want_first, atol=1e-6)
    np.testing.assert_allclose(second, want_second, atol=1e-6)
    np.testing.assert_allclose(diff, want_second - want_first, atol=1e-6)
    return float(np.abs(want_second - want_first).max())


def test_two_inputs_on_one_model(make_window, qtbot):
    from attnviz.gui.window.figure_actions import figure_trace

    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None and win.loaded is not None, timeout=60000)
    pinned = _shown(win, qtbot, "the cat sat")
    assert win.actions_["pin"].shortcut().toString() == "Ctrl+P"
    win.actions_["pin"].trigger()
    assert win.state.shown.pinned is pinned
    view = _compare_view(win, qtbot)
    current = _shown(win, qtbot, "the dog sat")
    qtbot.waitUntil(lambda: view.trace is current, timeout=10000)
    win.selection.update(layer=1, head=1)
    assert _check_maps(view, pinned, current, 1, 1) > 1e-4  # other words: the maps differ
    assert view.maps[0].bar.levels == view.maps[1].bar.levels  # one colour scale for both
    assert "pinned" in view.maps[0].title.text and "current" in view.maps[1].title.text
    pair = figure_trace(win, view)
    assert "compare" in pair.meta  # export and copy draw the same pair through the one renderer
    win.actions_["unpin"].trigger()
    assert win.state.shown.pinned is None and view.values is None
    assert "Pin this trace" in view.empty.text() and view.empty.isVisibleTo(view)


def test_one_input_on_two_models_of_the_same_shape(make_window, qtbot, tmp_path):
    import torch

    from attnviz.io import assets_dir
    from attnviz.models.checkpoint import load_checkpoint, save_checkpoint

    twin = load_checkpoint(assets_dir() / "models" / "tiny-encoder")
    torch.manual_seed(7)  # the same architecture and tokenizer with other weights (a "fine-tuned" twin)
    with torch.no_grad():
        for p in twin.model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    other = save_checkpoint(tmp_path / "tiny-encoder-b", twin.model, twin.config, dict(twin.info),
                            tokenizer=twin.tokenizer)
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None and win.loaded is not None, timeout=60000)
    pinned = _shown(win, qtbot, "the cat sat")
    win.actions_["pin"].trigger()
    view = _compare_view(win, qtbot)
    with qtbot.waitSignal(win.model_loaded, timeout=60000):
        win.load_model(str(other))
    current = _shown(win, qtbot, "the cat sat")
    assert current.tokens == pinned.tokens and win.state.shown.pinned is pinned  # the pin outlives the model
    qtbot.waitUntil(lambda: view.trace is current, timeout=10000)
    win.selection.update(layer=0, head=0)
    assert _check_maps(view, pinned, current, 0, 0) > 1e-4  # other weights: the maps differ


def test_unlike_shapes_are_said_in_a_notice_and_in_the_view(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None and win.loaded is not None, timeout=60000)
    _shown(win, qtbot, "the cat sat")
    notices = []
    win.notice_shown.connect(lambda text, level: notices.append((text, level)))
    win.actions_["pin"].trigger()
    view = _compare_view(win, qtbot)
    _shown(win, qtbot, "the cat sat on")  # like shapes but for the token count
    qtbot.waitUntil(lambda: view.trace is win.trace, timeout=10000)
    assert view.values is None and "cannot compare" in view.empty.text()
    assert any("cannot compare" in t and level == "warning" for t, level in notices)
    assert "cannot compare" in win.notice.text and win.notice.isVisible()  # still up once the run is shown
    # negative control: a comparable input brings the maps back and says nothing of the kind
    notices.clear()
    _shown(win, qtbot, "the dog sat")
    qtbot.waitUntil(lambda: view.values is not None, timeout=10000)
    assert not any("cannot compare" in t for t, _ in notices)


def test_pin_with_nothing_shown_says_so(make_window, qtbot):
    win = make_window(start=False)
    notices = []
    win.notice_shown.connect(lambda text, level: notices.append((text, level)))
    win.actions_["pin"].trigger()
    assert win.state.shown.pinned is None and notices and "nothing to pin" in notices[-1][0]


def test_a_long_pair_is_refused_in_the_view_before_any_copy(qtbot, monkeypatch):
    from attnviz.gui.views import compare_view
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    loaded = load_model("coref", device="cpu")
    a, b = run_trace(loaded, text="the cat sat"), run_trace(loaded, text="the dog sat")
    view = compare_view.CompareView(Selection())
    qtbot.addWidget(view)
    view.set_trace(b)
    view.set_pinned(a)
    assert view.values is not None  # under the bound: drawn
    monkeypatch.setattr(compare_view, "MAX_PIN_TOKENS", len(a.tokens) - 1)
    view.set_pinned(b)  # a new pair under the lowered bound
    assert view.values is None and "too long to compare" in view.empty.text()


def test_a_narrow_compare_view_stacks_the_difference_under_the_maps(qtbot):
    """Three maps in a row in a half-window dock left each a sliver; narrower than 1.4 × its height, the view puts
    the maps one under another (the difference last) and goes back to a row when wide (control)."""
    import attnviz
    from attnviz.analysis.trace_compare import pair_traces
    from attnviz.gui.views.compare_view import CompareView
    from attnviz.selection import Selection

    m = attnviz.load("coref")
    pair = pair_traces(m.trace("the animal was tired").trace, m.trace("the animal was wide").trace)
    view = CompareView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(500, 560)
    view.show()
    view.set_trace(pair)
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.stacked is True, timeout=5000)
    d = view.maps[2]
    assert view.figure.layout.itemAt(2, 0) is d
    view.resize(1500, 500)
    qtbot.waitUntil(lambda: view.stacked is False, timeout=5000)
    assert view.figure.layout.itemAt(0, 2) is d
