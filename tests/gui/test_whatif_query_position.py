"""What if compares the outputs at the walkthrough's own query and names it (issue 36, finding 7).

For the bundled translate model the verdict read decoder position 8 (the one that wrote [EOS]) while the
walkthrough's query and the Prediction panel were on position 7; picking another query changed nothing.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from walkthrough_fixtures import show_widget  # noqa: E402

from attnviz.analysis.decoder_positions import position_distribution  # noqa: E402
from attnviz.analysis.walkthrough_default import default_query  # noqa: E402
from attnviz.gui.walkthrough import WhatIfPanel, sync_runner  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402
from attnviz.whatif import WhatIf  # noqa: E402

SOURCE = "the big dog sees a small cat"


def _headings(panel) -> str:
    return " ".join(lab.text() for lab in panel.board.items if hasattr(lab, "text"))


@pytest.fixture(scope="module")
def translate():
    if not (Path(__file__).resolve().parents[2] / "assets/models/translate/config.json").exists():
        pytest.skip("the bundled translate model is not built")
    return load_model("translate", device="cpu")


def _panel(qtbot, loaded, runs: list):
    def counting(kind, fn, on_result, on_error):
        runs.append(kind)
        sync_runner(kind, fn, on_result, on_error)

    panel = show_widget(qtbot, WhatIfPanel(run_async=counting))
    panel.set_model(loaded)
    panel.set_input(text=SOURCE)
    panel.rerun()
    return panel


def test_a_translation_is_compared_at_the_walkthrough_query_and_follows_a_picked_one(translate, qtbot):
    runs = []
    panel = _panel(qtbot, translate, runs)
    c = panel.comparison
    tokens = list(c.before.tokens)
    q = default_query(c.before, "cross")  # the row the walkthrough opens on ("→ vidas", position 7)
    assert q == len(tokens) - 3  # not the row that wrote [EOS] (8), nor the (end) row (9)
    row, _ = position_distribution(c.before, q)  # what the Prediction panel shows at that query
    text = _headings(panel)
    assert f"At {tokens[q]!r} (decoder position {q}, which wrote {tokens[q + 1]!r})" in text
    assert "Both decoders read the trained output" in text
    assert c.top_before[0] == (tokens[q + 1], pytest.approx(float(row.max())))
    assert c.read_at == q
    assert panel.grids["P_before"].highlight_rows == {q}  # the row compared is boxed in the maps

    # the walkthrough's query picked explicitly: the same reading
    panel.selection.update(query=q)
    assert panel.comparison.read_at == q
    # control: another query gives another position, re-read without running the model again
    n_runs = len(runs)
    panel.selection.update(query=3)
    c3 = panel.comparison
    assert len(runs) == n_runs
    assert c3.read_at == 3 and f"decoder position 3, which wrote {tokens[4]!r}" in _headings(panel)
    assert c3.top_before[0][0] == tokens[4] != c.top_before[0][0]
    assert panel.grids["P_before"].highlight_rows == {3}
    # and a re-run (a switch flipped) keeps the picked query
    panel.pos_box.setChecked(False)
    panel.rerun()
    assert len(runs) == n_runs + 1 and panel.comparison.read_at == 3
    assert "decoder position 3" in _headings(panel)


def test_a_source_word_query_is_said_not_to_predict(translate, qtbot):
    panel = _panel(qtbot, translate, [])
    q = default_query(panel.comparison.before, "cross")
    panel.selection.update(part="enc", query=1)
    assert panel.comparison.read_at == q  # the encoder writes nothing: the walkthrough's decoder row
    assert "source word" in _headings(panel)
    panel.selection.update(part="cross", query=1)  # control: a decoder row is read where it is
    assert panel.comparison.read_at == 1 and "source word" not in _headings(panel)


def test_a_decoder_and_a_classifier_say_what_they_compare(qtbot):
    from attnviz.runtime.native import task_of

    for name in ("induction", "coref"):
        if not (Path(__file__).resolve().parents[2] / f"assets/models/{name}/config.json").exists():
            pytest.skip(f"the bundled {name} model is not built")
    dec = load_model("induction", device="cpu")
    panel = show_widget(qtbot, WhatIfPanel(run_async=sync_runner))
    panel.set_model(dec)
    panel.set_input(text=task_of(dec).example_input())
    panel.set_switches(WhatIf(positional=False))
    panel.rerun()
    tokens = list(panel.comparison.before.tokens)
    last = len(tokens) - 1
    assert f"After the last token {tokens[last]!r} (position {last})" in _headings(panel)
    assert "not at the query" not in _headings(panel)  # negative control: the query is the last token
    panel.selection.update(query=3)
    assert f"not at the query {tokens[3]!r}, position 3" in _headings(panel)
    assert panel.grids["P_before"].highlight_rows == {last}  # where the prediction is really read

    enc = load_model("coref", device="cpu")
    panel.set_model(enc)
    panel.set_input(text=task_of(enc).example_input())
    panel.rerun()
    assert "For the whole input (a classifier's one answer, not a position's), the top class" in _headings(panel)
    assert panel.comparison.read_at is None and panel.grids["P_before"].highlight_rows == set()
