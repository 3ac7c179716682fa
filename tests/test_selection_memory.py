"""The Qt-free selection object remembers each model's place and undoes a page's detour (issue 36)."""

from __future__ import annotations

from attnviz.selection import Selection, SelectionState


def test_a_model_switch_drops_the_clicked_query_and_key_and_keeps_where_the_model_was_left():
    sel = Selection()
    sel.update(layer=1, head=3, query=8, key=7, part="self")
    sel.leave_model("coref")
    assert sel.state.key is None and sel.state.query is None  # "because" (7) is not boxed in the next model
    assert sel.kept("coref") == {"layer": 1, "head": 3, "part": "self"}
    assert sel.kept("translate") is None


def test_a_detour_left_untouched_goes_back_and_one_the_user_changed_stays():
    sel = Selection(SelectionState(layer=1, head=3, query=8))
    seen = []
    sel.connect(lambda s, changed: seen.append(changed))
    assert sel.start_detour(layer=0, head=2) == SelectionState(layer=1, head=3, query=8)
    assert (sel.layer, sel.head) == (0, 2) and sel.in_detour
    assert sel.end_detour() and (sel.layer, sel.head, sel.query) == (1, 3, 8)
    assert not sel.end_detour()  # negative control: no detour, nothing to undo
    sel.start_detour(layer=0, head=2)
    sel.update(head=1)  # the user picked a head on the detour page: it is theirs and stays
    assert not sel.end_detour() and (sel.layer, sel.head) == (0, 1)


def test_a_model_left_during_a_detour_is_kept_where_the_other_tabs_were():
    sel = Selection(SelectionState(layer=1, head=3, query=8))
    sel.start_detour(layer=0, head=2)
    sel.leave_model("coref")
    assert sel.kept("coref") == {"layer": 1, "head": 3, "part": "self"} and not sel.in_detour


def test_stored_selections_are_validated():
    sel = Selection()
    sel.restore_kept({"coref": {"layer": 1, "head": 3, "part": "self"}, "bad": {"layer": -1, "head": 0, "part": "self"},
                      "worse": {"layer": "1", "head": 0, "part": "self"}, "odd": {"layer": 0, "head": 0, "part": "x"},
                      3: {"layer": 0, "head": 0, "part": "self"}})
    assert sel.kept_states() == {"coref": {"layer": 1, "head": 3, "part": "self"}}
    sel.restore_kept(["not", "a", "dict"])
    assert sel.kept_states() == {"coref": {"layer": 1, "head": 3, "part": "self"}}


def test_listeners_of_a_detour_already_know_where_the_other_tabs_are():
    sel = Selection(SelectionState(layer=1, head=3))
    seen = []
    sel.connect(lambda s, changed: seen.append(sel.detour_origin))
    sel.start_detour(layer=0, head=2)
    assert seen == [SelectionState(layer=1, head=3)]
    sel.update(head=1)
    assert sel.detour_origin is None  # the user moved: no longer the detour the app made


def test_a_row_clicked_on_the_detour_page_stays_and_the_other_tabs_get_their_head_back():
    sel = Selection(SelectionState(layer=1, head=3, query=8))
    sel.start_detour(layer=0, head=2)
    sel.update(query=3, key=5)  # a row and a key clicked in the walkthrough: not a choice of head
    assert sel.detour_origin == SelectionState(layer=1, head=3, query=8)  # the heading still names it
    assert sel.end_detour() and (sel.layer, sel.head, sel.query, sel.key) == (1, 3, 3, 5)
    # control: a head chosen on the page stays, and so does the row
    sel.start_detour(layer=0, head=2, query=8)
    sel.update(head=1, query=4)
    assert not sel.end_detour() and (sel.layer, sel.head, sel.query) == (0, 1, 4)


def test_a_head_chosen_on_a_page_is_kept_per_page_and_model():
    sel = Selection(SelectionState(layer=1, head=3))
    assert sel.page_choice("walkthrough", "coref") is None
    sel.update(layer=0, head=1)
    sel.choose_on_page("walkthrough", "coref")
    sel.update(layer=1, head=3, key=7)  # clicks elsewhere afterwards do not rewrite the choice
    assert sel.page_choice("walkthrough", "coref") == {"layer": 0, "head": 1, "part": "self"}
    assert sel.page_choice("walkthrough", "translate") is None and sel.page_choice("attention", "coref") is None
