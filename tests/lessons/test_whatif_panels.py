"""The exported What-if figure (lessons.figure_data.whatif_panels) as the app's What if tab shows it: on
translate the row is the one that wrote the last word (not the "[EOS]" row that wrote nothing, as the export
opened on) and the same position the prediction line names, masked cells are marked (hatched) rather than painted
as weights of 0, the title says it is the decoder's self-attention, and an ablated head is the head shown.
Controls: masked cells are exactly the decoder's future (upper triangle); coref (an encoder) has no mask."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.lessons.figure_data import whatif_panels
from attnviz.runtime import load_model
from attnviz.selection import SelectionState
from attnviz.whatif import WhatIf

SOURCE = "the small dog sees a cat"


@pytest.fixture(scope="module")
def translate():
    return load_model("translate")


def test_translate_opens_on_the_row_that_wrote_the_last_word(translate):
    fig = whatif_panels(translate, WhatIf(temperature=2.0), SelectionState(layer=0, head=0), text=SOURCE)
    q = fig.numbers["query"]
    rows = fig.panels[0].rows
    assert "[EOS]" not in rows[q] and q < len(rows) - 1
    assert f"decoder position {q}," in fig.notes[1]  # the prediction line names the same position
    assert f"(position {q})" in fig.notes[0]
    assert "decoder self-attention" in fig.title
    for panel in fig.panels:
        m = panel.masked
        assert m is not None and m.shape == panel.values.shape
        np.testing.assert_array_equal(m, np.triu(np.ones_like(m, dtype=bool), k=1))  # the future, exactly
        assert np.all(panel.values[m] == 0.0)


def test_an_ablated_head_is_the_one_shown(translate):
    fig = whatif_panels(translate, WhatIf(ablate={(1, 1)}), SelectionState(layer=0, head=0), text=SOURCE)
    assert (fig.numbers["layer"], fig.numbers["head"]) == (1, 1) and "layer 1, head 1" in fig.title


def test_an_encoder_has_nothing_masked():
    coref = load_model("coref")
    fig = whatif_panels(coref, WhatIf(temperature=2.0), SelectionState(layer=1, head=3),
                        text="The animal didn't cross the street because it was too tired")
    assert all(p.masked is None or not p.masked.any() for p in fig.panels)
    assert "decoder" not in fig.title


@pytest.mark.parametrize("model,causal", [("induction", True), ("coref", False)])
def test_the_mask_figure_says_what_this_models_mask_is(model, causal):
    """``--view causal-mask`` titles M by the mask the model has: a decoder's future (−∞ above the diagonal) or,
    for an encoder, nothing masked (it was titled "−∞ above" over all zeros, its note "every key after its query")."""
    from attnviz.lessons.figure_data import mask_panels
    from attnviz.runtime import run_trace

    loaded = load_model(model)
    text = "The animal didn't cross the street because it was too tired" if model == "coref" else None
    trace = run_trace(loaded, text=text or "abcdefabcdef")
    fig = mask_panels(trace, SelectionState(layer=0, head=0))
    m = fig.panels[0]
    assert ("−∞ above" in m.title) == causal and ("nothing masked" in m.title) == (not causal)
    assert ("every key after its query" in fig.notes[0]) == causal
    assert ("up to the query" in fig.notes[1]) == causal
    assert fig.title.startswith("The causal mask") == causal
    assert bool(m.masked.any()) == causal


def test_the_switched_panel_names_the_head_as_the_app_does(translate):
    """The exported What-if figure titled its second map "Ablated l1h0" (str.capitalize lowered the head's name);
    the app's panel says "switched off (z = 0) · L1 h0"."""
    fig = whatif_panels(translate, WhatIf(ablate={(1, 0)}), SelectionState(layer=1, head=0), text=SOURCE)
    switched = fig.panels[-1].title
    assert switched == "L1·H0 switched off (z = 0)", switched
    control = whatif_panels(translate, WhatIf(temperature=2.0), SelectionState(layer=1, head=0), text=SOURCE)
    assert control.panels[-1].title == "T = 2"  # control: a caption without a head name keeps its words


def test_small_numbers_in_the_notes_print_real_minus_signs():
    """The permutation and mask notes printed "1.2e-07": a hyphen that reads as a dash on a slide."""
    from attnviz.lessons.figure_data import sci

    assert sci(1.2e-7) == "1.2e\u221207" and sci(-3.0e-5) == "\u22123.0e\u221205"
    assert sci(250.0) == "2.5e+02"  # control: no minus where there is none


def test_small_probabilities_are_not_printed_as_zero(translate):
    """The prediction line names runners-up of ~0.001 as the app prints them ("0.001"), never "0.00"; control:
    the top prediction keeps two decimals."""
    import re

    fig = whatif_panels(translate, WhatIf(ablate={(1, 0)}), SelectionState(layer=0, head=0), text=SOURCE)
    line = fig.notes[1].split("): ", 1)[1]  # the predictions, after the position's name
    values = [float(v) for v in re.findall(r" (\d+(?:\.\d+)?(?:e-\d+)?)(?:,|$| →)", line)]
    assert values and max(values) > 0.5 and f"{max(values):.2f}" in line
    assert "0.00," not in line and not line.endswith("0.00") and " 0.00 " not in line
    assert all(v > 0 for v in values)
