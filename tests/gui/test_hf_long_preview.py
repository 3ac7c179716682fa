"""A long input's forward in the app: the selected layer's preview (q, k and lse, no T×T) is drawn by the head
map as a long trace's map is (overview max-pooled on the views' lane, off the GUI thread), titled as a preview
of that layer, and its overview equals the max-pool of the finished trace's map; while no map of the new input
has come, the last input's map says it is the previous input's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.gui.hf_head_map_window import ready_head_map
from tests.hf.factories import make_model

LONG = " ".join(["the cat sat on the mat and it was tired"] * 40)  # ≈600 tokens: on the fastest kernel


@pytest.fixture
def llama_folder(tmp_path):
    pytest.importorskip("transformers")
    return make_model("llama", tmp_path / "llama4", seed=7, layers=4, max_pos=1024)


def test_a_long_runs_preview_is_pooled_off_the_gui_thread_and_equals_the_trace(make_window, qtbot, llama_folder,
                                                                                 monkeypatch):
    import attnviz.gui.views.on_demand_map as odm
    import attnviz.hf.capture as cap
    from attnviz.analysis.trace_parts import format_value
    from attnviz.capture.on_demand import ON_DEMAND_T
    from attnviz.capture.preview import PreviewMaps
    from attnviz.gui.views.heatmap_data import block_max

    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    monkeypatch.setattr(cap, "PREVIEW_CELLS", 1 << 16)  # this input's 4 × T × T is above it, as 8,192 tokens are
    monkeypatch.setattr(odm, "OVERVIEW_SIDE", 128)  # each overview cell the max of a block
    win.selection.update(layer=2, head=1)
    gui, asked, events = threading.get_ident(), [], []
    real = PreviewMaps.probs

    def spy(self, *args, **kwargs):
        asked.append(threading.get_ident())
        return real(self, *args, **kwargs)
    monkeypatch.setattr(PreviewMaps, "probs", spy)
    win.lane.progress.connect(lambda kind, item: events.append(
        ("preview", item, head_map.heatmap.title.text, head_map.on_demand)))
    # (another job's result, a re-run of the start-up input, may come too: only this input's trace counts)
    win.lane.result.connect(lambda kind, value: kind == "trace" and len(value.trace.tokens) >= ON_DEMAND_T
                            and events.append(("trace", value, None, None)))
    with qtbot.waitSignal(win.trace_shown, timeout=90000):
        win.run_text(LONG)
    qtbot.waitUntil(lambda: any(e[0] == "trace" for e in events), timeout=30000)
    assert [e[0] for e in events] == ["preview", "trace"]  # the preview came before the trace
    _, item, title, od = events[0]
    trace = events[1][1].trace
    T = len(trace.tokens)
    assert T >= ON_DEMAND_T and "L2.probs" in trace.deferred
    assert item.probs is None and item.layer == 2 and item.shape == (4, T, T)
    assert od is not None and od.trace.preview is item and (od.layer, od.head) == (2, 1)
    assert title.replace("\u00a0", " ").startswith("Layer 2 · head 1 · self-attention") \
        and "forward running, layers 0–3" in title.replace("\u00a0", " ")
    # the full trace replaces the preview (and its fill stops)
    qtbot.waitUntil(lambda: head_map.trace is trace, timeout=10000)
    assert head_map.preview is None and head_map.on_demand is None and od.cancelled
    assert "forward running" not in head_map.heatmap.title.text
    # the preview drawn again, left to fill: its overview is the trace's map max-pooled, computed off the GUI thread
    asked.clear()
    head_map.show_preview(item, head=1)
    od = head_map.on_demand
    qtbot.waitUntil(lambda: od.overview_done, timeout=60000)
    f = 1 << od.overview_level
    assert f > 1  # pooled: each overview cell a block's maximum
    want = block_max(trace.probs(2, heads=1)[0], f, f)
    np.testing.assert_allclose(od.overview, want, rtol=0, atol=1e-7)
    assert asked and gui not in asked
    # negative control: another head's map is not what was drawn
    assert np.abs(block_max(trace.probs(2, heads=0)[0], f, f) - od.overview).max() > 1e-3
    qtbot.waitUntil(lambda: "computing overview" not in head_map.heatmap.title.text, timeout=10000)
    assert "forward running, layers 0–3" in head_map.heatmap.title.text.replace("\u00a0", " ")
    row, col = T - 1, 5  # the hover: the one exact cell, never a block's maximum
    exact = float(trace.probs(2, heads=1, rows=row, cols=col)[0, 0, 0])
    assert head_map.cell_text(row, col).endswith(format_value(exact))
    # zoomed in to fewer cells than pixels: the preview's exact weights, computed as tiles (a long trace's path)
    head_map.heatmap.vb.setRange(xRange=(100, 164), yRange=(300, 364), padding=0)
    qtbot.waitUntil(lambda: head_map.tile is not None and head_map.tile.level == 0
                    and not np.isnan(head_map.tile.image).any() and "refining" not in head_map.heatmap.title.text,
                    timeout=30000)
    t = head_map.tile
    np.testing.assert_allclose(t.image, trace.probs(2, heads=1, rows=slice(t.row0, t.row1),
                                                    cols=slice(t.col0, t.col1))[0], rtol=0, atol=1e-7)
    assert head_map.preview is item  # still the preview (a zoom is no change of selection)


def test_the_last_inputs_map_says_so_until_a_map_of_the_new_one_comes(make_window, qtbot, llama_folder):
    from attnviz.gui.views.head_map_preview import RUNNING_NEW_INPUT

    win, head_map = ready_head_map(make_window, qtbot, llama_folder)
    shown = head_map.heatmap.title.text
    assert RUNNING_NEW_INPUT not in shown  # control: the current input's map is not marked
    head_map.drop_preview()  # a run started; its first map is slow to come
    qtbot.waitUntil(lambda: head_map.heatmap.title.text == shown + RUNNING_NEW_INPUT, timeout=10000)
    win.selection.update(head=(win.selection.head + 1) % 4)  # still the previous input's, whatever is selected
    assert head_map.heatmap.title.text.endswith(RUNNING_NEW_INPUT)
    run = head_map._runs
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.run_text("the cat sat")
    assert RUNNING_NEW_INPUT not in head_map.heatmap.title.text  # the new input's map: no mark
    head_map.mark_running(run)  # a mark asked for before that map came stays away
    assert RUNNING_NEW_INPUT not in head_map.heatmap.title.text
    head_map.mark_running(head_map._runs)  # the control: a mark for the run now current shows
    assert head_map.heatmap.title.text.endswith(RUNNING_NEW_INPUT)
    head_map.mark_running(note="")  # a run ended without a map (an image refused): the mark goes
    assert RUNNING_NEW_INPUT not in head_map.heatmap.title.text
