"""The refusal notice's advice (issue 36): a refusal over length says to shorten the input to the limit it
names; one that already says so, or that is not about length, gets no such advice (the controls)."""

from __future__ import annotations

from attnviz.gui.window.refusal_notice import refusal_notice


def test_a_length_refusal_says_to_shorten_the_input():
    own = ("DebertaV2Model computes attention in its own code (terms attnviz cannot recompute from q and k): its "
           "full (heads, T, T) maps are kept, up to 2,048 tokens (this input has 3,001)")
    text = refusal_notice(own, cleared=True)
    assert text.startswith(own) and "shorten the input to 2,048 tokens or fewer" in text
    assert text.endswith("(the views are empty until an input runs)") and "\n" not in text


def test_no_advice_twice_nor_where_length_is_not_the_reason():
    loader = "the text has 600 tokens but bert takes at most 512; shorten it"
    assert refusal_notice(loader, cleared=False) == loader  # it says so already
    empty = "the text is empty: type a sentence"
    assert refusal_notice(empty, cleared=False) == empty
    assert "shorten" not in refusal_notice(empty, cleared=True)
