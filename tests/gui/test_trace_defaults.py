"""Which attention and query a new trace starts from (pure function, no window)."""

from __future__ import annotations

import numpy as np

from attnviz.capture.description import TraceDescription
from attnviz.gui.panels.trace_defaults import trace_defaults


class FakeTrace:
    """Two layers × two heads over three tokens; head (1, 1) points hardest (the sharpest)."""

    def __init__(self, meta, has_cross=False):
        self.meta, self.has_cross, self.tokens, self.grid, self.kind = meta, has_cross, ["a", "b", "c"], None, "encoder"
        self.n_heads = 2

    @property
    def description(self):
        return TraceDescription.from_meta(self.meta)

    def layers_in(self, part="self"):
        return 2

    def query_tokens(self, part="self"):
        return self.tokens

    def selection_error(self, part="self", layer=0, head=0, query=None):
        if part == "cross" and not self.has_cross:
            return "no cross-attention"
        return None if 0 <= layer < 2 and 0 <= head < 2 else "no such head"

    def probs(self, layer, part="self", heads=None, rows=None, cols=None):
        flat = np.full((2, 3, 3), 1 / 3)
        if layer == 1:
            flat[1] = np.eye(3) * 0.9 + 0.05 * (1 - np.eye(3))
        return flat[:, np.atleast_1d(rows)] if rows is not None else flat


def trace(query_index=None, has_cross=False, focus=None):
    meta = {} if query_index is None else {"query_index": query_index}
    if focus:
        meta["focus"] = focus
    return FakeTrace(meta, has_cross)


def _new(t, query=None, kept=None):
    return trace_defaults(None, t, query, new_model=True, kept=kept)


def test_a_new_model_starts_on_cross_attention_when_it_has_one():
    assert _new(trace(has_cross=True))["part"] == "cross"
    assert _new(trace()) == {"part": "self", "layer": 1, "head": 1, "query": None, "key": None}  # the sharpest head
    assert trace_defaults(trace(), trace(has_cross=True), None, new_model=False) == {}  # the user's choice stays


def test_the_task_query_is_followed_until_the_user_picks_another():
    assert trace_defaults(None, trace(8), None, new_model=False) == {"query": 8}
    assert trace_defaults(trace(8), trace(9), 8, new_model=False) == {"query": 9}  # "it" moved as you typed
    assert trace_defaults(trace(8), trace(9), 2, new_model=False) == {}  # the user chose token 2
    assert trace_defaults(trace(8), trace(), 8, new_model=False) == {}  # no task query: leave it


def test_a_new_model_never_keeps_the_previous_models_query():
    assert _new(trace(), query=2)["query"] is None
    assert _new(trace(2), query=1)["query"] == 2  # its own task query, not the previous model's 1


def test_a_new_model_opens_on_the_head_it_names_as_focus():
    t = trace(2, focus={"layer": 0, "head": 1, "query": 2})
    assert _new(t) == {"part": "self", "layer": 0, "head": 1, "query": 2, "key": None}
    assert trace_defaults(t, t, 2, new_model=False) == {"query": 2}  # later runs leave the user's head alone


def test_a_model_opened_again_comes_back_where_it_was_left():
    t = trace(2, focus={"layer": 0, "head": 1, "query": 2})
    assert _new(t, kept={"layer": 1, "head": 0, "part": "self"}) == {"part": "self", "layer": 1, "head": 0, "query": 2,
                                                     "key": None}
    # negative control: a kept head the model no longer has is not used
    assert _new(t, kept={"layer": 5, "head": 0, "part": "self"})["layer"] == 0


def test_bundled_coref_names_its_focus_head_in_the_trace():
    from attnviz.runtime import load_model, run_trace

    loaded = load_model("coref", device="cpu")
    trace_ = run_trace(loaded, text="The animal didn't cross the street because it was too wide")
    m = loaded.info["metrics"]
    assert trace_.meta["focus"] == {"layer": m["focus_layer"], "head": m["focus_head"], "query": 8}
