"""Which attention and query a new trace starts from (pure function, no window)."""

from __future__ import annotations

from types import SimpleNamespace

from attnviz.gui.panels.trace_defaults import trace_defaults


def trace(query_index=None, has_cross=False):
    meta = {} if query_index is None else {"query_index": query_index}
    return SimpleNamespace(meta=meta, has_cross=has_cross)


def test_a_new_model_starts_on_cross_attention_when_it_has_one():
    assert trace_defaults(None, trace(has_cross=True), None, new_model=True) == {"part": "cross"}
    assert trace_defaults(None, trace(), None, new_model=True) == {"part": "self"}
    assert trace_defaults(trace(), trace(has_cross=True), None, new_model=False) == {}  # the user's choice stays


def test_the_task_query_is_followed_until_the_user_picks_another():
    assert trace_defaults(None, trace(8), None, new_model=False) == {"query": 8}
    assert trace_defaults(trace(8), trace(9), 8, new_model=False) == {"query": 9}  # "it" moved as you typed
    assert trace_defaults(trace(8), trace(9), 2, new_model=False) == {}  # the user chose token 2
    assert trace_defaults(trace(8), trace(), 8, new_model=False) == {}  # no task query: leave it


def test_a_new_model_opens_on_the_head_it_names_as_focus():
    t = SimpleNamespace(meta={"query_index": 8, "focus": {"layer": 1, "head": 3, "query": 8}}, has_cross=False)
    assert trace_defaults(None, t, None, new_model=True) == {"part": "self", "layer": 1, "head": 3, "query": 8}
    assert trace_defaults(t, t, 8, new_model=False) == {"query": 8}  # later runs leave the user's head alone


def test_bundled_coref_names_its_focus_head_in_the_trace():
    from attnviz.runtime import load_model, run_trace

    loaded = load_model("coref", device="cpu")
    trace_ = run_trace(loaded, text="The animal didn't cross the street because it was too wide")
    m = loaded.info["metrics"]
    assert trace_.meta["focus"] == {"layer": m["focus_layer"], "head": m["focus_head"], "query": 8}
