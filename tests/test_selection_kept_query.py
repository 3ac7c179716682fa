"""The Qt-free selection keeps a model's clicked query with the input it was clicked in (issue 36: a relaunch
lost it), and gives it back only for that input; stored copies are validated."""

from __future__ import annotations

import json

from attnviz.selection import Selection, input_fingerprint


def test_the_query_is_kept_with_its_input_and_survives_storage():
    here = input_fingerprint(["→", "vidas", "el"])
    sel = Selection()
    sel.update(layer=1, head=1, query=3, key=2, part="cross")
    sel.leave_model("translate", here)
    assert sel.state.query is None and sel.state.key is None  # the next model never sees them
    stored = json.loads(json.dumps(sel.kept_states()))  # what the settings file holds
    again = Selection()
    again.restore_kept(stored)
    assert again.kept("translate") == {"layer": 1, "head": 1, "part": "cross", "query": 3, "input": here}


def test_no_input_no_query_and_malformed_queries_are_dropped():
    sel = Selection()
    sel.update(query=4)
    sel.keep("coref")  # control: without the input's name the query is not kept
    assert sel.kept("coref") == {"layer": 0, "head": 0, "part": "self"}
    sel.restore_kept({"a": {"layer": 0, "head": 0, "part": "self", "query": -1, "input": "x"},
                      "b": {"layer": 0, "head": 0, "part": "self", "query": 2, "input": 5}})
    assert "query" not in sel.kept("a") and "query" not in sel.kept("b")


def test_fingerprints_tell_inputs_apart():
    assert input_fingerprint(["a", "b"]) == input_fingerprint(("a", "b"))
    assert input_fingerprint(["a", "b"]) != input_fingerprint(["ab"])  # not the joined text
    assert input_fingerprint(["0,0"], b"\x00") != input_fingerprint(["0,0"], b"\x01")  # an image's pixels count
