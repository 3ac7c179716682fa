"""The Compare view legible in the 1280×720 window's half-width dock (issue 35 item 6, issue 36): with the
docked floor at 12 px, every row and column label of a 12-token pair is drawn (the maps one under another,
the figure scrolling where the dock is short), one colour scale for the two maps and the difference centred
on 0, for two inputs on one model and one input on two models; nothing pinned: one sentence, no empty bars."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gui.layout_audit import scene_problems

SENTENCE = "The animal didn't cross the street because it was too tired"
DOCK = (496, 470)  # the Compare dock of the 1280×720 window (measured on Xvfb)


@pytest.fixture
def floor_12px(monkeypatch):
    """The docked window's label floor the lead decided (12 px = 9 pt), whatever legible.py says today."""
    import attnviz.gui.widgets.token_axis_layout as token_axis_layout  # (the axis' floor is read there)

    monkeypatch.setattr(token_axis_layout, "floor_pt", lambda style, widget=None: 9.0)


def _shown(qtbot, first, second, size, layer=1, head=3):
    from attnviz.gui.views.compare_view import CompareView
    from attnviz.selection import Selection

    sel = Selection()
    sel.update(layer=layer, head=head)
    view = CompareView(sel)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_trace(second)
    view.set_pinned(first)
    qtbot.waitUntil(lambda: view.values is not None and view.maps[0].vb.height() > 0, timeout=5000)
    qtbot.wait(50)  # let the axes lay their labels out at the final size
    return view


def _check_scales(view):
    first, second, diff = view.values
    assert view.maps[0].bar.levels == view.maps[1].bar.levels  # one scale for both maps
    lo, hi = view.maps[2].bar.levels
    assert lo == pytest.approx(-hi) and hi >= float(np.abs(diff).max()) - 1e-9  # centred on 0, nothing clipped
    assert sum(m.bar.isVisible() for m in view.maps[:2]) == 1  # one bar drawn for the two maps


def _traces(model_a="coref", model_b="coref", text_b=SENTENCE.replace("tired", "wide"), text_a=SENTENCE):
    from attnviz.runtime import load_model, run_trace

    a = run_trace(load_model(model_a, device="cpu"), text=text_a)
    b = run_trace(load_model(model_b, device="cpu"), text=text_b)
    return a, b


def test_two_inputs_in_the_narrow_dock_name_every_label_at_12px(qtbot, floor_12px):
    a, b = _traces()
    view = _shown(qtbot, a, b, DOCK)
    assert view.stacked and len(a.tokens) == 12
    assert scene_problems(view.figure.scene(), 1.0, 12.0, "compare") == []
    for m in view.maps:  # each map names its own rows and columns, at least 14 px a label
        assert len(m.left.labels) == len(m.bottom.labels) == 12
        assert m.vb.height() / 12 >= 14 and m.vb.width() / 12 >= 14
    _check_scales(view)
    np.testing.assert_allclose(view.values[2], b.probs(1)[3] - a.probs(1)[3], atol=1e-6)


def test_one_input_on_two_models_in_the_narrow_and_the_wide_view(qtbot, floor_12px):
    text = "the movie was not good but the acting was great"  # the two models differ only in positions
    a, b = _traces("order-sentiment", "order-sentiment-nopos", text_b=text, text_a=text)
    for size, stacked in ((DOCK, True), ((1500, 500), False)):
        view = _shown(qtbot, a, b, size, layer=0, head=1)
        assert view.stacked is stacked
        assert scene_problems(view.figure.scene(), 1.0, 12.0, f"compare {size}") == []
        _check_scales(view)
        assert float(np.abs(view.values[2]).max()) > 1e-3  # other weights: the maps differ


def test_nothing_pinned_is_one_sentence_without_empty_colour_bars(qtbot):
    from attnviz.gui.views.compare_view import CompareView
    from attnviz.gui.widgets.colour_bar import ColourBarItem
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    trace = run_trace(load_model("coref", device="cpu"), text=SENTENCE)
    view = CompareView(Selection())
    qtbot.addWidget(view)
    view.resize(*DOCK)
    view.show()
    view.set_trace(trace)  # the app's current trace, nothing pinned

    def drawn_bars():  # colour bars on screen: the figure shown and the bar visible in it
        if not view.scroll.isVisibleTo(view):
            return []
        return [it for it in view.figure.scene().items() if isinstance(it, ColourBarItem) and it.isVisible()]

    assert view.values is None and drawn_bars() == []
    assert "Ctrl+P" in view.empty.text() and "Pin this trace" in view.empty.text()
    assert view.empty.isVisibleTo(view) and not view.scroll.isVisibleTo(view)
    view.set_pinned(run_trace(load_model("coref", device="cpu"), text=SENTENCE.replace("tired", "wide")))
    assert view.values is not None and len(drawn_bars()) == 2  # control: a pair brings the maps and bars back
    assert not view.empty.isVisibleTo(view) and view.scroll.isVisibleTo(view)


def test_in_a_row_the_three_maps_are_drawn_equally_wide(qtbot):
    """Same columns, same width: in a row the first map had no bar slot and took its width (~410 px against
    ~275 for the same 10 columns in a 1920×1080 export)."""
    first, second = _traces()
    view = _shown(qtbot, first, second, (1800, 700))
    assert not view.stacked
    widths = [m.vb.width() for m in view.maps]
    assert max(widths) - min(widths) <= 0.02 * max(widths), widths  # the bars' tick labels differ a little
    _check_scales(view)
