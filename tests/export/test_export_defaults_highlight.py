"""`attnviz export` opens where the app does and can leave out the clicked highlight (issue 36, finding 9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnviz.selection import SelectionState, without_highlight


def _capture(monkeypatch):
    from attnviz.export import batch

    seen = []
    monkeypatch.setattr(batch, "export_one", lambda name, tr, state, path, *a, **k: seen.append((tr, state)) or path)
    return seen


def _needs(name):
    if not (Path(__file__).resolve().parents[2] / f"assets/models/{name}/config.json").exists():
        pytest.skip(f"the bundled {name} model is not built")


def test_the_default_head_map_of_translate_is_the_apps(monkeypatch, tmp_path):
    """It used L0·H0 of self-attention while the app opens on cross-attention at the rule's head."""
    from attnviz.analysis.walkthrough_default import default_selection
    from attnviz.cli import main

    _needs("translate")
    seen = _capture(monkeypatch)
    assert main(["export", "--model", "translate", "--view", "head-map", "-o", str(tmp_path / "h.png")]) == 0
    trace, state = seen[-1]
    want = default_selection(trace, "attention")
    assert (state.part, state.layer, state.head) == (want["part"], want["layer"], want["head"]) == (
        "cross", want["layer"], want["head"])
    assert (state.layer, state.head) != (0, 0)  # the blurry alignment is not the default any more


def test_no_highlight_drops_the_clicked_row_and_column(monkeypatch, tmp_path):
    from attnviz.cli import main

    _needs("coref")
    seen = _capture(monkeypatch)
    base = ["export", "--model", "coref", "--view", "head-map", "-o", str(tmp_path / "h.png"), "--query", "8"]
    assert main(base) == 0
    assert seen[-1][1].query == 8  # negative control: asked for, the row is boxed
    assert main(base + ["--no-highlight"]) == 0
    assert seen[-1][1].query is None and seen[-1][1].key is None


def test_a_figure_about_one_query_keeps_it():
    s = SelectionState(layer=1, head=2, query=8, key=7)
    assert without_highlight(s, "rollout") == SelectionState(layer=1, head=2, query=8)
    assert without_highlight(s, "steps").query == 8
    assert without_highlight(s, "token-lines") == SelectionState(layer=1, head=2)


def test_the_export_dialog_offers_it_and_the_app_passes_it_on(qtbot, monkeypatch):
    from types import SimpleNamespace

    from attnviz.gui.dialogs.export_dialog import ExportDialog
    from attnviz.gui.window import figure_actions
    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    dialog = ExportDialog("headmap.png")
    qtbot.addWidget(dialog)
    assert dialog.highlight.isChecked()  # the figure as on screen unless unticked
    got = []
    fake = SimpleNamespace(export=lambda view, trace, state, *a: got.append(state), busy=False)
    monkeypatch.setattr(figure_actions, "exporter", lambda win: fake)
    win = SimpleNamespace(selection=Selection(SelectionState(layer=1, head=3, query=8, key=7)), trace=None)
    view = HeadMapView(selection=win.selection)
    qtbot.addWidget(view)
    figure_actions.start_export(win, view, "x.png", None, None, highlight=True)
    figure_actions.start_export(win, view, "x.png", None, None, highlight=False)
    assert (got[0].query, got[0].key) == (8, 7) and (got[1].query, got[1].key) == (None, None)
