"""Rollout figure of a long text (issue 34): the token strips show as many positions around the query as fit, and the
title names them, instead of running off the figure (300 tokens) or drawing nothing but the title (2,000, 8,192);
the query's token in the title is spelled as every other label spells it ("Ġmethods" → "methods")."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from attnviz.analysis.rollout_window import strip_window, window_caption
from attnviz.bench.traces import sample_trace
from tests.gui.test_views_rollout import make


def _long_decoder(T: int):
    """A decoder trace whose default row (the one rule: "it", else the last token) is the last token: the
    sample text's "it" is renamed, so these tests keep measuring a window that ends at the query."""
    trace = sample_trace("decoder", T=T, n_layers=2)
    trace.tokens = ["she" if t == "it" else t for t in trace.tokens]
    return trace


def _window(view):
    """The strips' positions [lo, hi); every position where the view has no window (the code before the fix)."""
    strips = getattr(view, "strip_set", None)
    return (strips.lo, strips.hi) if strips is not None else (0, len(view.strips["rollout"].tokens))


def _strips_at_page(view, w, h):
    """(the strips' scene rects, the title's text, the window, the rollout strip's tokens, mark, values) while the figure is laid out for a w×h export."""
    img = QImage(w, h, QImage.Format.Format_ARGB32)
    painter, seen, orig = QPainter(img), [], view._relayout
    src = QRectF(0, 0, w, h)

    def record(geom):
        orig(geom)
        if geom == src:
            strip = view.strips["rollout"]
            seen.append(([s.mapRectToScene(s.boundingRect()) for s in view.strips.values()],
                         view.title_item.text.replace("&nbsp;", " "), *_window(view),
                         list(strip.tokens), strip.marked, strip.values.copy()))

    view._relayout = record
    try:
        view.render_figure(painter, src, 1.0)
    finally:
        painter.end()
        view._relayout = orig
    return seen[0]


def test_a_long_texts_strips_fit_the_page_and_the_title_names_the_window(qtbot):
    trace = _long_decoder(600)
    view, _ = make(qtbot, trace)
    for w, h in ((1280, 720), (1920, 1080)):
        rects, title, lo, hi, tokens, marked, values = _strips_at_page(view, w, h)
        assert all(r.height() > 0 and r.bottom() <= h for r in rects), (w, h, [r.bottom() for r in rects])
        assert 8 < hi - lo < 600 and hi == 600  # the last token is the query: the window ends there
        assert len(tokens) == hi - lo and marked == 599 - lo
        np.testing.assert_allclose(values, view.maps.maps["rollout"][lo:hi])  # shares over all 600 keys
        assert f"positions {lo}–599 of 600" in title and "outside the shown positions: raw attention" in title
    # control of the measure: the whole row does not fit the page, so drawing every position would overflow it
    view.strip_set.window = 600
    view.strip_set._draw()
    assert sum(s.preferredHeight() for s in view.strips.values()) > 1080


def test_the_window_follows_the_size_on_screen_and_hover_names_input_positions(qtbot):
    trace = sample_trace("decoder", T=600, n_layers=2)
    view, sel = make(qtbot, trace)
    bottom = max(view.widget_pos(s, 0, s.size().height()).y() for s in view.strips.values())
    assert bottom <= view.canvas.viewport().height()
    small = len(view.strips["rollout"].tokens)
    view.resize(1600, 1000)
    qtbot.waitUntil(lambda: len(view.strips["rollout"].tokens) > small, timeout=5000)
    lo = _window(view)[0]
    view.strips["rollout"].on_hover(0)
    assert f"[{lo}] · rollout" in view.hover_text
    view.strips["rollout"].on_click(3)
    assert sel.query == lo + 3


def test_a_short_text_shows_every_position_and_no_window_line(qtbot):
    trace = sample_trace("decoder", T=12, n_layers=2)
    view, _ = make(qtbot, trace)
    assert _window(view) == (0, 12) and len(view.strips["rollout"].tokens) == 12
    assert "positions" not in view.title_item.text


def test_the_title_spells_the_query_token_as_labels_do(qtbot):
    trace = sample_trace("decoder", T=12, n_layers=2)
    trace.tokens = [f"Ġw{i}" for i in range(11)] + ["ĊĊ"]
    view, sel = make(qtbot, trace)
    assert "Where does ⏎⏎ [11]" in view.title_item.text
    sel.update(query=4)
    assert "Where does w4 [4]" in view.title_item.text and "Ġ" not in view.title_item.text


def test_window_caption_counts_what_lies_outside():
    maps = {"raw": np.array([0.5, 0.25, 0.25, 0.0]), "grad": None}
    assert window_caption(0, 4, 4, maps, {"raw": "raw attention"}) == ""
    lo, hi = strip_window(4, 3, 2)
    text = window_caption(lo, hi, 4, maps, {"raw": "raw attention", "grad": "gradient rollout"})
    assert (lo, hi) == (2, 4) and "positions 2–3 of 4" in text and "raw attention 75 % (most on [0]: 0.5)" in text
    assert "gradient" not in text
    lo, hi = strip_window(4, 0, 2)  # the largest outside after the window: named by its input position
    named = window_caption(lo, hi, 4, {"raw": np.array([0.1, 0.1, 0.2, 0.6])}, {"raw": "raw"}, ["a", "b", "c", "Ġd"])
    assert (lo, hi) == (0, 2) and "raw 80 % (most on d [3]: 0.6)" in named


def test_a_long_inputs_row_is_computed_on_the_lane_and_a_colour_change_does_not_recompute(qtbot, monkeypatch):
    """Above LONG_ROLLOUT_T keys the row streams over every layer (minutes at 8,192 × 30 layers): the view says so
    and computes it on the views' lane, not the GUI thread; the colour scale only redraws it. (The threshold is
    lowered here so a small trace takes the long path; the row is checked against the whole-matrix rollout.)"""
    from attnviz.analysis import compute_rollout
    import attnviz.analysis.rollout_maps as rollout_maps
    import attnviz.gui.views.rollout_view as rollout_view

    monkeypatch.setattr(rollout_view, "LONG_ROLLOUT_T", 100)
    monkeypatch.setattr(rollout_maps, "LONG_ROLLOUT_T", 100)
    trace = _long_decoder(300)
    view, _ = make(qtbot, trace)
    assert view.maps is None or view.background_pending  # not computed on the GUI thread within set_trace
    qtbot.waitUntil(lambda: view.maps is not None, timeout=20000)
    want = compute_rollout(trace)[299]
    np.testing.assert_allclose(view.maps.maps["rollout"], want / want.sum(), rtol=1e-6)
    assert "get its information" in view.title_item.text
    before = view.maps
    view.scale_box.set_mode("per-map")
    assert view.maps is before and not view.background_pending and "its own colour scale" in view.title_item.text
    view.residual.setValue(20)  # control: a setting that changes the row does compute it again
    qtbot.waitUntil(lambda: view.maps is not before and view.maps is not None, timeout=20000)


def test_the_long_path_says_what_it_computes_meanwhile(qtbot, monkeypatch):
    import attnviz.gui.views.rollout_view as rollout_view

    monkeypatch.setattr(rollout_view, "LONG_ROLLOUT_T", 100)
    monkeypatch.setattr(rollout_view.RolloutView, "run_in_background", lambda self, fn, done, progress=None: None)
    view, _ = make(qtbot, _long_decoder(300))
    assert "computing the rollout row of" in view.title_item.text and "[299]" in view.title_item.text
    assert "2 layers × 300 keys" in view.title_item.text
