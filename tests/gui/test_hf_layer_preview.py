"""A Hugging Face model in the app: the head map draws the selected layer while the forward still runs
(titled as a preview), a superseded run's preview never shows, and the work is only queued by the GUI
thread (the forward and the copy run on the model lane's worker)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.gui.hf_head_map_window import ready_head_map
from tests.hf.factories import make_model


@pytest.fixture
def llama_folder(tmp_path):
    pytest.importorskip("transformers")
    return make_model("llama", tmp_path / "llama4", seed=7, layers=4)


def test_preview_of_the_selected_layer_comes_before_the_trace(make_window, qtbot, llama_folder, monkeypatch):
    import attnviz.gui.lane as lane_mod

    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    win.selection.update(layer=2, head=1)
    gui, workers, events = threading.get_ident(), [], []
    real = lane_mod.report_progress

    def spy(item):
        workers.append(threading.get_ident())
        return real(item)
    monkeypatch.setattr(lane_mod, "report_progress", spy)
    win.lane.progress.connect(lambda kind, item: events.append(
        ("preview", item, head_map.heatmap.title.text, threading.get_ident())))
    win.lane.result.connect(lambda kind, value: events.append(("trace", value, None, threading.get_ident())))

    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.run_text("the cat sat")
    assert [e[0] for e in events] == ["preview", "trace"]
    _, item, title, where = events[0]
    trace = events[1][1].trace
    assert title.replace("\u00a0", " ") == "Layer 2 · head 1 · self-attention — forward running, layers 0–3"
    assert list(item.tokens) == trace.tokens
    np.testing.assert_array_equal(item.probs, trace["L2.probs"])  # the model's own numbers
    np.testing.assert_array_equal(item.masked, np.isneginf(trace["L2.mask"]))  # drawn grey, not as 0
    assert workers and all(w != gui for w in workers) and where == gui  # computed off, drawn on the GUI thread
    # the full trace replaces the preview
    qtbot.waitUntil(lambda: head_map.trace is trace, timeout=10000)
    assert head_map.preview is None and "forward running" not in head_map.heatmap.title.text
    assert head_map.heatmap.title.text.startswith("Layer 2 · head 1")


def test_a_superseded_runs_preview_never_shows(make_window, qtbot, llama_folder):
    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    win.selection.update(layer=1)
    previews, titles = [], []
    win.lane.progress.connect(lambda kind, item: previews.append(item))
    head_map.heatmap.set_title = _recording(head_map.heatmap.set_title, titles)
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.run_text("the cat sat on the mat")
        win.run_text("it was tired")  # replaces the first run before any of its items is delivered
    trace = win.trace
    assert trace.meta["input_text"] == "it was tired"
    assert len(previews) == 1 and list(previews[0].tokens) == trace.tokens
    previewed = [t.replace("\u00a0", " ") for t in titles if "forward running" in t]
    assert previewed == [f"Layer 1 · head {win.selection.head} · self-attention — forward running, layers 0–3"]


def test_a_selection_change_during_the_preview_goes_back_to_the_trace(make_window, qtbot, llama_folder):
    from attnviz.capture.preview import LayerPreview
    from attnviz.gui.views.head_map_preview import RUNNING_NEW_INPUT

    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    probs = np.full((4, len(win.trace.tokens), len(win.trace.tokens)), 0.5, np.float32)
    head_map.show_preview(LayerPreview(0, 4, probs, win.trace.tokens), head=9)  # head clamped to 3
    assert head_map.heatmap.title.text.replace("\u00a0", " ") == \
        "Layer 0 · head 3 · self-attention — forward running, layers 0–3"
    other = (win.selection.head + 1) % 4  # a real change (the model may open on any head: the default rule)
    win.selection.update(head=other)
    assert head_map.preview is None and head_map.heatmap.title.text.startswith(
        f"Layer {win.selection.layer} · head {other}")
    assert head_map.heatmap.title.text.endswith(RUNNING_NEW_INPUT)  # the forward still runs: the last input's map


def test_a_long_preview_is_drawn_block_max_pooled_and_says_so(make_window, qtbot, llama_folder):
    from attnviz.capture.preview import LayerPreview
    from attnviz.gui.views.heatmap_data import MAX_PX, quantize

    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    T = MAX_PX + 6
    probs = np.zeros((2, T, T), np.float32)
    probs[1, 2, 3] = 0.75  # one cell: its 2×2 block shows it
    masked = np.triu(np.ones((T, T), bool), 1)
    head_map.show_preview(LayerPreview(1, 4, probs, [str(i) for i in range(T)], masked), head=1)
    assert head_map.heatmap.title.text.replace("\u00a0", " ") == ("Layer 1 · head 1 · self-attention · each drawn cell = max of 2×2 cells"
                                           " — forward running, layers 0–3")
    img = head_map.image_data
    assert img.shape == (T // 2, T // 2) and img[1, 1] == quantize(np.float32([[0.75]]), 1.0)[0, 0] and img[0, 5] == 255  # 255: masked


def _recording(fn, into):
    def set_text(text):
        into.append(text)
        return fn(text)
    return set_text


def test_a_new_run_drops_the_last_runs_preview(make_window, qtbot, llama_folder):
    """A run that sends no preview (an input above the preview's size) must not leave the last run's layer on
    screen, titled as this forward's: the new run takes it down as it starts (it showed for a 4-minute 8k run)."""
    from attnviz.capture.preview import LayerPreview

    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    stale = ["old"] * 5
    head_map.show_preview(LayerPreview(0, 4, np.full((4, 5, 5), 0.2, np.float32), stale), head=0)
    assert "forward running" in head_map.heatmap.title.text  # the control: a preview on screen
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.run_text("the cat sat")
        assert head_map.preview is None and "forward running" not in head_map.heatmap.title.text
        assert head_map.heatmap.title.text.startswith(f"Layer {win.selection.layer} · head")
