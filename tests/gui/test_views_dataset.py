"""The data-set views: head scores grid/table and the joint query–key embedding, alone and in the app."""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.views.dataset_view import DatasetView  # noqa: E402
from attnviz.gui.views.heatmap_data import quantize  # noqa: E402
from attnviz.gui.views.qk_embedding_view import QKEmbeddingView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402
from dataset_views import make  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def shot(view, name):
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()
    assert view.grab().save(f"{SHOTS}/{name}.png")


def test_dataset_view_scores_off_the_gui_thread_and_draws_the_grid(qtbot, induction_trace):
    view, sel = make(qtbot, DatasetView, induction_trace)
    # while scoring, no map and no colour bar: an empty map on a 0–1 bar would read as all zeros
    assert view.result is None and not view.grid.bar.isVisible() and not view.grid.image.isVisible()
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    res = view.result
    assert view.grid.image.isVisible() and view.pattern.bar.isVisible()
    # every cell carries its number: the grid's bar (its label ran over its ticks) gives way to the title
    assert not view.grid.bar.isVisible() and "head grid colours: fixed scale 0–1" in view.caption.text
    assert view.ran_on is not None and view.ran_on != threading.main_thread().name
    assert res.n_inputs == 200 and res.meta["n_repeated"] > 0
    view.score_box.setCurrentIndex(view.score_box.findData("induction"))
    ind = res.scores["self"]["induction"]
    want = quantize(ind, 1.0, ~np.isfinite(ind), vmin=0.0)
    # the grid shows the scores; a share on a fixed 0–1 scale (a faint head never looks like a strong one)
    np.testing.assert_array_equal(view.grid.indices, want)
    assert view.grid.bar.levels == (0.0, 1.0) and "fixed scale 0–1" in view.grid.bar.label
    assert "Induction score" in view.grid.title.text and "repeated random sequences" in view.caption.text
    # click the strongest induction head's cell: every view follows
    layer, head = np.unravel_index(np.argmax(ind), ind.shape)
    pos = view.widget_pos(view.grid.vb, head + 0.5, layer + 0.5)
    qtbot.mouseClick(view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert (sel.layer, sel.head) == (layer, head)
    np.testing.assert_allclose(view.pattern.indices, quantize(np.nan_to_num(res.patterns["self"][layer, head]),
                                                              float(np.nanmax(res.patterns["self"][layer, head])),
                                                              ~np.isfinite(res.patterns["self"][layer, head])))
    # top inputs of the head, best first, each openable
    assert view.top_list.count() == 8
    first = view.top_list.item(0)
    idx = first.data(Qt.ItemDataRole.UserRole)
    assert first.text().startswith(f"{res.top_values['self']['induction'][layer, head, 0]:.3f}")
    with qtbot.waitSignal(view.input_requested) as got:
        view.top_list.itemClicked.emit(first)
    assert got.args[0] == res.inputs[idx]
    shot(view, "dataset_view_induction")


def test_dataset_table_sorts_by_a_score_and_selects_the_row(qtbot, induction_trace):
    view, sel = make(qtbot, DatasetView, induction_trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    header = [view.table.horizontalHeaderItem(c).text() for c in range(view.table.columnCount())]
    col = header.index("prev")
    view.table.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    prev = view.result.scores["self"]["previous_token"]
    shown = [float(view.table.item(r, col).text()) for r in range(view.table.rowCount())]
    assert shown == sorted(shown, reverse=True)
    assert shown[0] == pytest.approx(np.nanmax(prev), abs=1e-3)
    view.table.cellClicked.emit(0, 0)
    layer, head = np.unravel_index(np.nanargmax(prev), prev.shape)
    assert (sel.layer, sel.head) == (layer, head) and layer == 0  # the previous-token head is in layer 0


def test_dataset_view_without_a_task_says_so(qtbot, tmp_path):
    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model
    from attnviz.runtime import load_model, run_trace
    from attnviz.text.tokenizer import Tokenizer

    tok = Tokenizer.build("char", ["abc def"])
    cfg = ModelConfig(kind="decoder", vocab_size=len(tok.vocab), n_layers=1, n_heads=2, d_model=16, max_len=16,
                      head="lm")
    path = save_checkpoint(tmp_path / "no-task", build_model(cfg), cfg, {"task": "something-else"}, tokenizer=tok)
    loaded = load_model(path)
    trace = run_trace(loaded, text="abc")
    trace.meta["model_name"] = str(path)  # the view finds the model by its folder
    view, _ = make(qtbot, DatasetView, trace)
    # no data set to run: a one-line notice naming what is missing, and the scores of the input on screen
    qtbot.waitUntil(lambda: view.result is not None, timeout=60000)
    assert "no-task has no built-in task" in view.caption.text and "input on screen only" in view.caption.text
    assert str(tmp_path) not in view.caption.text  # the folder's name, not its path
    assert view.result.n_inputs == 1
    P = np.stack([trace.probs(i) for i in range(trace.n_layers)]).astype(np.float64)  # (L, H, T, T)
    T = P.shape[-1]
    want = np.mean([P[:, :, i, i - 1] for i in range(1, T)], axis=0)
    np.testing.assert_allclose(view.result.scores["self"]["previous_token"], want, atol=1e-6)
    # the data box offers only sources that exist: no task, so no "held-out inputs of the task"; nothing to Score
    offered = [view.source_box.itemText(i) for i in range(view.source_box.count())]
    assert offered == ["the input on screen only", "a text file (one input per line)…"], offered
    assert not view.run_button.isEnabled() and not view.n_box.isEnabled()
    # and in one line under the controls, in view even when a real model's grid scrolls the caption away
    assert view._parts.notice.isVisible() and "no-task has no built-in task" in view._parts.notice.text()
    # a new input is scored again (the model did not change, so no job ran: the old input's scores stayed)
    other = run_trace(loaded, text="defabc")
    other.meta["model_name"] = str(path)
    view.set_trace(other)
    qtbot.waitUntil(lambda: view.result is not None and view.result.patterns["self"].shape[-1] == 6, timeout=60000)


def test_a_model_with_a_task_offers_its_held_out_inputs(qtbot, induction_trace):
    """The control: induction names a built-in task, so its held-out inputs are offered and scored."""
    view, _ = make(qtbot, DatasetView, induction_trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    offered = [view.source_box.itemText(i) for i in range(view.source_box.count())]
    assert offered == ["held-out inputs of the task", "a text file (one input per line)…"], offered
    assert view.run_button.isEnabled() and view.result.n_inputs > 1 and "held-out" in view.caption.text
    assert not view._parts.notice.isVisible()


def test_qk_view_without_a_data_set_shows_the_current_inputs_queries_and_keys(qtbot, tmp_path):
    from attnviz.analysis.qk_embedding import embed_qk
    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model
    from attnviz.runtime import load_model, run_trace
    from attnviz.text.tokenizer import Tokenizer

    tok = Tokenizer.build("char", ["abc def"])
    cfg = ModelConfig(kind="decoder", vocab_size=len(tok.vocab), n_layers=2, n_heads=2, d_model=16, max_len=16,
                      head="lm")
    path = save_checkpoint(tmp_path / "no-task", build_model(cfg), cfg, {"task": "something-else"}, tokenizer=tok)
    trace = run_trace(load_model(path), text="abcabc", precision="float32")
    trace.meta["model_name"] = str(path)
    view, sel = make(qtbot, QKEmbeddingView, trace)
    sel.update(layer=1, head=1)
    qtbot.waitUntil(lambda: view.embedding is not None and view._shown_key == ("self", 1, 1, "pca"), timeout=60000)
    # one line of reason, naming the folder (the job's paragraph of CLI advice made a three-line title)
    assert "the current input only (no-task has no built-in task to draw a data set from)" in view.title_item.text
    assert "AttentionViz" not in view.title_item.text and "AttentionViz" in view.legend.text
    q, k = trace["L1.q"][1], trace["L1.k"][1]  # (T, dh) straight from the trace
    np.testing.assert_allclose(view.embedding.points, embed_qk(q, k).points, atol=1e-6)
    assert view.plot.getAxis("bottom").isVisible() and "variance" in view.plot.getAxis("bottom").labelText
    view.set_trace(None)  # nothing to show: no axes left over with the last head's range and variance
    assert not view.plot.getAxis("bottom").isVisible() and not view.plot.getAxis("left").isVisible()


def test_qk_view_embeds_one_head_and_opens_the_input_under_a_click(qtbot, induction_trace):
    from attnviz.analysis.qk_embedding import embed_qk

    view, sel = make(qtbot, QKEmbeddingView, induction_trace)
    qtbot.waitUntil(lambda: view.embedding is not None, timeout=120000)
    sel.update(layer=1, head=0)
    qtbot.waitUntil(lambda: view._shown_key == ("self", 1, 0, "pca"), timeout=60000)
    q, k = view.data.head_vectors("self", 1, 0)
    np.testing.assert_allclose(view.embedding.points, embed_qk(q, k).points)
    n = len(q)
    assert len(view.scatter.data) == 2 * n
    assert "layer 1, head 0" in view.title_item.text and "held-out inputs of induction" in view.title_item.text
    text = view.point_text(n + 3)  # a key
    assert text.startswith("key ") and "⟦" in text
    with qtbot.waitSignal(view.input_requested) as got:
        view.open_point(3)
    assert got.args[0] == view.data.items[int(view.data.input_index["self"][3])]
    for mode in ("position", "token", "query / key"):
        view.colouring.setCurrentText(mode)
        assert view.legend.text
    shot(view, "qk_embedding_induction")


def test_qk_export_from_the_command_line(tmp_path):
    from PIL import Image

    from attnviz.cli import main

    out, table = tmp_path / "qk.png", tmp_path / "qk.csv"
    assert main(["export", "--model", "coref", "--text", "the dog didn't cross the road because it was too tired",
                 "--view", "qk-embedding", "--layer", "1", "--head", "2", "--size", "800x600", "-o", str(out),
                 "--data", str(table)]) == 0
    with Image.open(out) as im:
        assert im.size == (800, 600)
        assert len(np.unique(np.asarray(im.convert("RGB")).reshape(-1, 3), axis=0)) > 20
    # the exported numbers: one query and one key row for every real position of the 200 held-out inputs
    from attnviz.runtime import load_model
    from attnviz.runtime.dataset_inputs import task_batches

    loaded = load_model("coref", device="cpu")
    n_pos = sum(int(b.parts["self"].q_valid.sum()) for b in task_batches(loaded, 200, batch_size=16))
    rows = np.loadtxt(table, delimiter=",", skiprows=1, usecols=(1, 2, 3, 4, 5))
    assert rows.shape == (2 * n_pos, 5) and rows[:, 2].sum() == n_pos
    assert rows[:, 4].max() == 199


def test_a_top_input_opens_in_every_view_of_the_app(make_window, qtbot, tmp_path):
    """An untrained model of the built-in induction task: the click runs the clicked input."""
    import torch

    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.models.registry import build_model
    from attnviz.tasks import get_task

    task = get_task("induction")
    cfg = task.model_config(d_model=16)
    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "ind", build_model(cfg), cfg, {"task": "induction"}, tokenizer=task.tokenizer)
    win = make_window(model=str(path), text="abcabc")
    qtbot.waitUntil(lambda: win.trace is not None and "DatasetView" in win.views_area.docks, timeout=60000)
    dock = win.views_area.docks["DatasetView"]
    dock.raise_()
    view = dock.widget()
    qtbot.waitUntil(lambda: view.result is not None, timeout=120000)
    item = view.top_list.item(0)
    text = view.result.inputs[item.data(Qt.ItemDataRole.UserRole)]
    with qtbot.waitSignal(win.trace_shown, timeout=60000) as got:
        view.top_list.itemClicked.emit(item)
    assert got.args[0].meta["input_text"] == text and win.input_panel.text == text


def test_dataset_view_scores_a_text_file_and_reports_a_bad_one(qtbot, induction_trace, tmp_path):
    view, _ = make(qtbot, DatasetView, induction_trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    good = tmp_path / "letters.txt"
    good.write_text("abcabc\nxyzxyz\nqq\n", encoding="utf-8")
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        view.set_data_source("corpus", str(good))
    assert view.result.n_inputs == 3 and "3 inputs" in view.caption.text
    assert len(view._cell_labels) == 4  # 2 layers × 2 heads, each value written in its cell
    kept = {i: t for i, t in view.result.inputs.items() if i < 3}  # the file's lines keep their order
    assert kept and all(t == ["abcabc", "xyzxyz", "qq"][i] for i, t in kept.items())
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfeabc")
    view.set_data_source("corpus", str(bad))
    # the one-line title names the score; the caption under the grid says why only the input on screen is scored
    qtbot.waitUntil(lambda: "cannot score" in view.caption.text and view.caption.isVisible(), timeout=60000)
    assert "not UTF-8" in view.caption.text and "the input on screen only" in view.caption.text


def test_a_long_run_can_be_stopped_and_both_views_are_installed_in_the_app(qtbot, induction_trace):
    from attnviz.gui.panels.views_area import discover_view_classes

    names = [c.__name__ for c in discover_view_classes()]
    assert "DatasetView" in names and "QKEmbeddingView" in names
    view, _ = make(qtbot, DatasetView, induction_trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    view.n_box.setValue(10_000)
    view.run_button.click()
    assert view.run_button.text() == "Stop"
    qtbot.waitUntil(lambda: view._progress[0] > 0, timeout=60000)
    view.run_button.click()
    assert view.run_button.text() == "Score" and view.result is None
    assert "stopped after" in view.grid.title.text
    from attnviz.gui.workers import background_lane

    # the worker notices at its next batch and ends: once the lane has delivered (or dropped) its
    # outcome, nothing it sent may have been shown
    # (the lane's own stale count says nothing here: the view drops the job's outcome by its id, and other
    # tests' jobs share the lane)
    qtbot.waitUntil(lambda: not background_lane().busy, timeout=60000)
    done, total = view._progress
    assert view.result is None and 0 < done < total and total >= 10_000  # stopped at a batch, not at the end
    assert "stopped after" in view.grid.title.text


@pytest.mark.parametrize("cls", [DatasetView, QKEmbeddingView])
def test_data_set_views_keep_the_view_contract(qtbot, cls):
    """The contract every view keeps (tests/gui/test_views_contract.py), on traces without a model:
    the data-set views then show the input on screen with a notice."""
    from tests.gui.view_contract import check_view_contract, contract_traces

    check_view_contract(qtbot, cls, contract_traces())


def test_cross_attention_names_the_scores_that_apply(qtbot):
    from attnviz.runtime import load_model, run_trace

    trace = run_trace(load_model("translate", device="cpu"), text="the small cat sees a dog")
    view, sel = make(qtbot, DatasetView, trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    assert set(view.result.parts) == {"self", "enc", "cross"}
    assert view.part == "self" and view.score == "previous_token"  # control: defined there, kept
    sel.update(part="cross")
    # the default score is not defined for cross-attention: a defined one is chosen, and the title says so
    # (it stayed on previous-token, a hatched grid under a title listing the others)
    assert view.score == "first_token" and view.score in view.result.score_names("cross")
    title, caption = view.grid.title.text, view.caption.text
    assert "previous-token score is not defined for cross-attention" in caption.lower() and "is shown" in caption and "sink" in title, caption
    view.score_box.setCurrentIndex(view.score_box.findData("previous_token"))  # asked for again: the same
    assert view.score == "first_token" and "not defined for cross-attention" in view.caption.text
    view.score_box.setCurrentIndex(view.score_box.findData("entropy"))
    assert "not defined" not in view.caption.text + view.grid.title.text  # the user's own pick: the note is gone
    ent = view.result.scores["cross"]["entropy"]
    np.testing.assert_array_equal(view.grid.indices, quantize(ent, float(ent.max()), ~np.isfinite(ent), vmin=0.0))


def test_qk_view_names_the_part_it_embeds_beside_an_encoder(qtbot):
    """translate at 1280×720, cross-attention selected: the first embedding (the decoder's self-attention) was drawn
    titled "layer 1, head 0", as if it were cross-attention's; it now says cross-attention is not embedded, and
    names the decoder's and the encoder's self-attention (the control)."""
    from attnviz.bench.traces import sample_trace

    sel = Selection()
    sel.update(part="cross", layer=1, head=0)  # selected before the view gets the trace, as in the app
    view = QKEmbeddingView(selection=sel)
    qtbot.addWidget(view)
    view.resize(1300, 700)
    view.show()
    view.set_trace(sample_trace("encoder-decoder", T=6))
    qtbot.waitUntil(lambda: view.data is not None and not view._collecting and not view.background_pending,
                    timeout=60000)
    qtbot.waitUntil(lambda: "cross-attention come from different sequences" in view.title_item.text, timeout=10000)
    sel.update(part="self")
    qtbot.waitUntil(lambda: "decoder self-attention layer 1, head 0" in view.title_item.text, timeout=60000)
    sel.update(part="enc")
    qtbot.waitUntil(lambda: "encoder self-attention layer 1, head 0" in view.title_item.text, timeout=60000)
