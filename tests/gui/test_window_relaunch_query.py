"""Issue 36: a relaunch restored the model and its layer · head but not the clicked query (3 → none). The
query is kept per model with the input it was clicked in (attnviz/selection.py) and comes back with that input;
control: relaunched on another text, the old position names nothing in it, so no query is carried over."""

from __future__ import annotations

TEXT = "the cat sat on the mat"


def _started(make_window, qtbot, text: str):
    win = make_window(model="tiny-decoder", text=text)
    qtbot.waitUntil(lambda: win.trace is not None and win.views_installed, timeout=60000)
    qtbot.wait(50)
    return win


def test_a_relaunch_restores_the_query_on_the_same_input_only(make_window, qtbot):
    win = _started(make_window, qtbot, TEXT)
    first = win.selection.query
    pick = 3 if first != 3 else 2
    win.selection.update(layer=1, head=1, query=pick)
    win.close()

    again = _started(make_window, qtbot, TEXT)
    assert (again.selection.layer, again.selection.head, again.selection.query) == (1, 1, pick)
    again.close()

    other = _started(make_window, qtbot, "a dog ran far")  # control: another input, the same model
    assert (other.selection.layer, other.selection.head) == (1, 1)  # where the model was left still comes back
    assert other.selection.query != pick and other.selection.query == first  # the model's own default, not stale
