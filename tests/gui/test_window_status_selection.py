"""The status line for a selection names the clicked key too, and the query and key by their tokens (after
clicking "because" in coref it said only "layer 1 · head 3 · query 8", seen at 1920×1080)."""

from __future__ import annotations

from attnviz.gui.window.shown_trace import selection_words
from attnviz.selection import SelectionState


def test_query_and_key_are_named_by_their_tokens(induction_trace):
    t = induction_trace
    words = selection_words(t, SelectionState(layer=1, head=0, query=3, key=2))
    assert words.startswith("layer 1 · head 0 · query 3 '") and " · key 2 '" in words
    assert f"'{t.tokens[3]}'" in words or t.tokens[3].strip() == ""


def test_without_a_key_or_a_trace_the_line_stays_short():  # the negative control
    assert selection_words(None, SelectionState(layer=0, head=2, query=5)) == "layer 0 · head 2 · query 5"
    assert selection_words(None, SelectionState(layer=0, head=2)) == "layer 0 · head 2"
