"""`attnviz heads` names what its induction column measured (issue 36, finding 8): the README's induction
score is the repeated-random-sequence probe; a model scored without it gets the column renamed."""

from __future__ import annotations

from attnviz.commands.heads import INDUCTION_NATURAL, format_table, induction_measured_on


def _doc(n_repeated):
    return {"model": "m", "n_inputs": 3, "n_repeated": n_repeated,
            "heads": [{"part": "self", "layer": 0, "head": 0, "scores": {"induction": 0.4, "previous_token": 0.2}}]}


def test_without_the_probe_the_column_is_named_for_what_it_measures():
    doc = _doc(0)
    assert induction_measured_on(doc) == "the inputs' own repeats"
    table = format_table(doc)
    header = table.splitlines()[2]
    assert INDUCTION_NATURAL in header and "induct" not in header
    assert "best repeat-induction pattern" in table and "not the induction score" in table
    assert "induct:" not in table and "prev/dup: attention on the previous / an earlier same token" in table


def test_with_the_probe_it_is_the_induction_score():  # negative control
    doc = _doc(200)
    assert induction_measured_on(doc) == "repeated random sequences"
    table = format_table(doc)
    assert "induct" in table.splitlines()[2] and INDUCTION_NATURAL not in table
    assert "prev/dup/induct: attention on the previous / an earlier same / the after-previous-occurrence token" in table


def test_a_vision_models_previous_token_column_names_the_patch():
    from attnviz.commands.heads import PREV_PATCH

    doc = {**_doc(0), "kind": "vit"}
    table = format_table(doc)
    header = table.splitlines()[2]
    assert PREV_PATCH in header and " prev " not in f"{header} "
    assert "best previous-patch" in table and "patch before in reading order" in table
    text = format_table({**_doc(0), "kind": "encoder"})  # control: a text model keeps "prev"
    assert " prev " in text.splitlines()[2] + " " and PREV_PATCH not in text
