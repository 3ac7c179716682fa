"""The walkthrough opens on its own head whatever was clicked elsewhere (issue 36, Deliver 2 and findings 5
and 6): a key or row clicked in the head map never changes which head the walkthrough opens on, only a head
chosen in the walkthrough itself does; the attention views' head is the one they showed before the
walkthrough was opened, also after a switch to another model and back; a clicked key never reaches another
model."""

from __future__ import annotations

from test_selection_per_model import _bundled, _switch
from test_selection_per_model import _ready as _started


def _ready(make_window, qtbot, **kwargs):
    win = _started(make_window, qtbot, **kwargs)
    win.build_remaining_views()
    qtbot.waitUntil(lambda: win.walkthrough is not None and getattr(win.walkthrough, "built", True), timeout=60000)
    return win


def _at(win):
    return win.selection.layer, win.selection.head


def _walkthrough_head(win, qtbot):
    """Show the Walkthrough tab; the (layer, head) its steps are computed for."""
    win.tabs.setCurrentWidget(win.walkthrough_page)
    steps = win.walkthrough.steps
    qtbot.waitUntil(lambda: steps.steps is not None, timeout=30000)
    return steps.steps.layer, steps.steps.head


def test_a_clicked_key_or_row_never_changes_the_walkthroughs_head(make_window, qtbot):
    from attnviz.analysis.walkthrough_default import walkthrough_default

    win = _ready(make_window, qtbot, model=_bundled("coref"))
    want = walkthrough_default(win.trace)[:2]
    focus = _at(win)
    assert want != focus  # coref's lecture head is one-hot at "it": the walkthrough really opens elsewhere
    win.selection.update(key=7)  # "because" clicked in the head map
    assert _walkthrough_head(win, qtbot) == want
    win.tabs.setCurrentWidget(win.views_area)
    assert _at(win) == focus and win.selection.key == 7  # the head map is where it was, its key still boxed
    win.selection.update(query=3, key=None)  # a row clicked instead
    assert _walkthrough_head(win, qtbot) == want
    win.tabs.setCurrentWidget(win.views_area)
    assert _at(win) == focus


def test_a_head_chosen_in_the_walkthrough_is_where_it_opens_next_time(make_window, qtbot):
    win = _ready(make_window, qtbot, model=_bundled("coref"))
    focus = _at(win)
    _walkthrough_head(win, qtbot)
    win.walkthrough.steps.head_box.setValue(0)  # the user's own choice, in the walkthrough
    win.walkthrough.steps.layer_box.setValue(1)
    win.tabs.setCurrentWidget(win.views_area)
    win.selection.update(layer=focus[0], head=focus[1], key=5)
    assert _walkthrough_head(win, qtbot) == (1, 0)  # negative control of the first test: a choice counts


def test_the_head_maps_head_survives_the_walkthrough_and_a_model_switch_and_no_key_does(make_window, qtbot):
    from attnviz.analysis.walkthrough_default import walkthrough_default

    win = _ready(make_window, qtbot, model=_bundled("coref"))
    focus = _at(win)
    want = walkthrough_default(win.trace)[:2]
    win.selection.update(key=7)
    assert _walkthrough_head(win, qtbot) == want
    _switch(win, qtbot, _bundled("translate"))  # switched while the walkthrough is in front
    assert win.selection.key is None  # "because"'s column is not boxed in translate
    win.tabs.setCurrentWidget(win.views_area)
    win.selection.update(key=7)  # and translate's clicked key does not come back to coref
    _switch(win, qtbot, _bundled("coref"))
    assert win.selection.key is None
    assert _at(win) == focus
    assert _walkthrough_head(win, qtbot) == want
    win.tabs.setCurrentWidget(win.views_area)
    assert _at(win) == focus
