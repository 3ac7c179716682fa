"""Model, input (text, token strip, image) and prediction panels: change the input or model, check what they hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from attnviz.models.checkpoint import load_checkpoint


def _bundled(name: str) -> Path:
    """A real bundled model's folder (the tiny test assets have no task models)."""
    path = Path(__file__).resolve().parents[2] / "assets" / "models" / name
    if not (path / "config.json").exists():
        pytest.skip(f"the bundled {name} model is not built")
    return path


def _ready(make_window, qtbot, **kwargs):
    win = make_window(start=False, **kwargs)
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    return win


# -- model panel --------------------------------------------------------------------------------------
def test_model_panel_lists_task_size_and_metrics(make_window, qtbot, assets):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    qtbot.waitUntil(lambda: len(win.model_panel.names()) == 4, timeout=30000)
    tree = win.model_panel.tree
    rows = {tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole): tree.topLevelItem(i) for i in range(4)}
    enc = rows["tiny-encoder"]
    n_params = sum(p.numel() for p in load_checkpoint(assets / "models" / "tiny-encoder").model.parameters())
    assert enc.text(0) == "tiny-encoder (tiny-classify)"
    assert enc.text(1) == f"{n_params / 1000:.3g} k"
    # the metric in words, or its score alone where the words do not fit the list (test_model_list_columns)
    assert enc.text(2) in ("accuracy 87.5%", "87.5%")
    assert enc.text(3).startswith("encoder · 2 layers × 2 heads · d=16")
    assert rows["tiny-vit"].text(3).startswith("vit ·")
    assert "held-out: accuracy 87.5%" in enc.toolTip(0)
    assert enc.isSelected()  # the loaded model is highlighted


def test_a_listed_models_folder_opened_by_path_is_highlighted(make_window, qtbot, assets, tmp_path):
    folder = assets / "models" / "tiny-decoder"
    win = _ready(make_window, qtbot, model=str(folder))
    qtbot.waitUntil(lambda: len(win.model_panel.names()) == 4, timeout=30000)
    tree = win.model_panel.tree
    selected = [tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) for i in range(4)
                if tree.topLevelItem(i).isSelected()]
    assert selected == ["tiny-decoder"]
    # a folder elsewhere is no listed model: nothing is highlighted
    win.model_panel.set_current(str(tmp_path))
    assert not any(tree.topLevelItem(i).isSelected() for i in range(4))


def test_picking_another_model_loads_and_runs_it(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: len(win.model_panel.names()) == 4, timeout=30000)
    item = next(win.model_panel.tree.topLevelItem(i) for i in range(4)
                if win.model_panel.tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) == "tiny-decoder")
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        win.model_panel.tree.itemActivated.emit(item, 0)
    assert win.loaded.name == "tiny-decoder" and got.args[0].kind == "decoder"
    # each model opens on its own example (the previous model's sentence is not carried over)
    assert got.args[0].meta["input_text"] == win.input_panel.text == win.input_panel.examples[0]
    assert win.prediction_panel.mode == "next-token"


@pytest.mark.parametrize("problem", ["empty", "bad-json", "no-weights"])
def test_bad_model_directory_gives_a_notice_and_keeps_the_model(make_window, qtbot, tmp_path, problem):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat sat")
    before, trace = win.loaded, win.trace
    bad = tmp_path / "broken"
    bad.mkdir()
    if problem == "bad-json":
        (bad / "config.json").write_text("{ not json", encoding="utf-8")
    if problem == "no-weights":
        (bad / "config.json").write_text('{"model": {"kind": "encoder", "vocab_size": 9}}', encoding="utf-8")
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.load_model(str(bad))
    text, level = got.args
    assert level == "error" and "cannot load the model" in text and str(bad) in text
    assert "Traceback" not in text
    assert win.notice.isVisible() and win.notice.text.endswith(text)
    assert win.loaded is before and win.trace is trace
    # the app keeps working
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        win.input_panel.set_text("a dog")
    assert got.args[0].tokens == ["[CLS]", "a", "dog"]
    assert win.notice.isVisible()  # a model problem stays until dismissed or a model loads
    # read at the moment the model has loaded: its first run may come back at once with a notice of its own
    shown_at_load = []
    win.model_loaded.connect(lambda _ref: shown_at_load.append(win.notice.isVisible()))
    with qtbot.waitSignal(win.model_loaded, timeout=30000):
        win.load_model("tiny-decoder")
    assert shown_at_load == [False]


def test_dropping_a_model_folder_loads_it(make_window, qtbot, assets):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(assets / "models" / "tiny-decoder"))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(win.model_loaded, timeout=30000) as got:
        win.dropEvent(event)
    assert got.args[0] == str(assets / "models" / "tiny-decoder")
    assert win.settings.recent("models")[0] == str((assets / "models" / "tiny-decoder").resolve())


# -- text input and token strip -----------------------------------------------------------------------
def test_typing_reruns_and_the_strip_shows_tokens_and_ids(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    edit = win.input_panel.edit
    edit.setFocus()
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        QTest.keyClicks(edit, " sat")
    qtbot.waitUntil(lambda: win.trace.meta["input_text"] == "the cat sat", timeout=30000)
    assert win.trace.tokens == ["[CLS]", "the", "cat", "sat"]
    strip = win.input_panel.strip.strip.data
    expected = win.loaded.tokenizer.encode("the cat sat")  # the tokenizer itself, not the strip's code
    assert strip.tokens == expected.tokens and strip.ids == expected.ids
    assert got.args[0] is not None


def test_bpe_strip_shows_the_merges_that_built_each_token(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-bpe", text="the animal was tired")
    data = win.input_panel.strip.strip.data
    learned = set(win.loaded.tokenizer.merges)
    assert any(data.merges)
    for token, steps in zip(data.tokens, data.merges):
        parts = list(token) if steps else None
        for step in steps:  # replaying the shown merges on the characters must rebuild the token
            a, b = step.split("+")
            assert (a, b) in learned
            i = next(i for i in range(len(parts) - 1) if parts[i] == a and parts[i + 1] == b)
            parts[i:i + 2] = [a + b]
        if steps:
            assert parts == [token]
    assert "BPE merges" in win.input_panel.strip_label.text()


def test_clicking_a_token_selects_it_everywhere(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat sat")
    strip = win.input_panel.strip.strip
    rect = strip._rects[2]
    QTest.mouseClick(strip, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert win.selection.query == 2 and strip.selected == 2


def test_the_token_a_task_answers_at_is_selected_until_the_user_picks_another(make_window, qtbot):
    coref = _bundled("coref")
    win = _ready(make_window, qtbot, model=str(coref), text="the animal didn't cross the street because it was tired")
    assert win.trace.tokens[win.selection.query] == "it"  # the it → animal lesson is on screen at once
    win.input_panel.set_text("yesterday the animal didn't cross the street because it was tired")
    qtbot.waitUntil(lambda: win.trace.meta["input_text"].startswith("yesterday"), timeout=30000)
    assert win.selection.query == win.trace.meta["query_index"] == 9  # "it" moved one to the right
    win.selection.update(query=2)  # the user picks "animal": typing no longer moves the selection
    win.input_panel.set_text("the animal didn't cross the street because it was tired")
    qtbot.waitUntil(lambda: win.trace.meta["input_text"].startswith("the"), timeout=30000)
    assert win.selection.query == 2


def test_text_longer_than_the_model_is_truncated_with_a_notice(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    long_text = " ".join(["the cat sat on the mat"] * 4)  # 24 words + [CLS], the model takes 12
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.input_panel.set_text(long_text)
    assert got.args[1] == "warning" and "truncated" in got.args[0]
    assert len(win.trace.tokens) == win.loaded.config.max_len
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        win.input_panel.set_text("the cat")
    assert not win.notice.isVisible()  # the next good input clears the warning


def test_empty_text_is_a_notice_not_an_error(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    trace = win.trace
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.input_panel.set_text("   ")
    # the figures of the previous text are not left under the empty input: every view is cleared
    assert "empty" in got.args[0] and trace is not None and win.trace is None
    assert all(view.trace is None for view in win.views_area.views)


# -- image input ----------------------------------------------------------------------------------------
def test_image_input_runs_and_undecodable_file_gives_a_notice(make_window, qtbot, tmp_path):
    win = make_window(start=False, model="tiny-vit")
    with qtbot.waitSignal(win.model_loaded, timeout=60000):
        win.start()
    img = np.zeros((40, 40, 3), np.uint8)
    img[10:30, 10:30] = (250, 30, 30)
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as got:
        win.input_panel.image.submit(img, caption="red square")
    trace = got.args[0]
    assert trace["image"].shape == (8, 8, 3)
    labels = ["circle", "square", "triangle"]
    shown = [(e[1], e[2]) for e in win.prediction_panel.bars.entries]
    order = np.argsort(-trace["prediction"], kind="stable")
    assert shown == [(labels[i], pytest.approx(float(trace["prediction"][i]))) for i in order]
    # a small classifier: the app captures attention gradients, so the Rollout view has all three maps
    assert all(f"L{i}.grad" in trace for i in range(trace.n_layers))
    # the views are docked in short steps after the window appears (issue 18): wait for the dock
    qtbot.waitUntil(lambda: "RolloutView" in win.views_area.docks, timeout=30000)
    win.views_area.docks["RolloutView"].raise_()
    rollout = win.views_area.docks["RolloutView"].widget()
    qtbot.waitUntil(lambda: rollout.maps is not None and rollout.maps.maps["grad"] is not None, timeout=10000)

    bad = tmp_path / "broken.png"
    bad.write_bytes(b"this is not a png")
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.input_panel.image.submit(str(bad))
    assert "cannot decode image" in got.args[0] and "Traceback" not in got.args[0]
    assert win.trace is trace  # the last good picture stays on screen


def test_pasting_an_image_from_the_clipboard(make_window, qtbot, qapp):
    from attnviz.gui.image_arrays import array_to_qimage, qimage_to_array

    win = make_window(start=False, model="tiny-vit")
    with qtbot.waitSignal(win.model_loaded, timeout=60000):
        win.start()
    img = np.random.default_rng(0).integers(0, 256, (12, 10, 3), dtype=np.uint8)
    assert np.array_equal(qimage_to_array(array_to_qimage(img)), img)  # odd width: row padding handled
    qapp.clipboard().setImage(array_to_qimage(img))
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        win.input_panel.image.paste()
    assert win.input_panel.image.caption.text() == "pasted image"
    qapp.clipboard().setText("no picture here")
    with qtbot.waitSignal(win.notice_shown, timeout=5000) as got:
        win.input_panel.image.paste()
    assert "no image" in got.args[0]


# -- prediction panel -----------------------------------------------------------------------------------
def test_class_probabilities_carry_the_labels(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat sat")
    pred = win.trace["prediction"]
    entries = win.prediction_panel.bars.entries
    assert [e[1] for e in entries] == [["negative", "positive"][i] for i in np.argsort(-pred, kind="stable")]
    assert sum(e[2] for e in entries) == pytest.approx(1.0, abs=1e-6)


def test_step_appends_the_most_likely_next_token(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-decoder", text="the ca")
    vocab = win.loaded.tokenizer.vocab
    best = vocab[int(np.argmax(win.trace["prediction"]))]
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        win.actions_["step"].trigger()
    assert win.input_panel.text == "the ca" + best
    # choosing another bar changes what Step appends
    second = win.prediction_panel.bars.entries[1][0]
    win.prediction_panel.bars.row_clicked.emit(second)
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        win.prediction_panel.step_button.click()
    assert win.input_panel.text == "the ca" + best + vocab[second]


def test_translation_output_and_per_token_predictions(qtbot):
    from attnviz.capture.trace import Trace
    from attnviz.gui.panels.prediction_panel import PredictionPanel

    panel = PredictionPanel()
    qtbot.addWidget(panel)
    panel.set_vocab(["[PAD]", "a", "b", "c"])
    enc_dec = Trace(["[BOS]", "a"], {"kind": "encoder-decoder", "output_text": "a b"},
                    {"prediction": np.array([0.1, 0.2, 0.6, 0.1], np.float32)})
    panel.set_trace(enc_dec)
    assert not panel.output.isHidden() and "a b" in panel.output.text()
    assert panel.step_button.isHidden() and panel.bars.entries[0][1] == "b"
    per_token = Trace(["x", "y"], {"kind": "encoder", "labels": ["A", "B"]},
                      {"prediction": np.array([[0.9, 0.1], [0.2, 0.8]], np.float32)})
    panel.set_trace(per_token)
    assert panel.bars.entries[0][1] == "A"
    panel.set_query(1)  # the selected query token decides which row is shown
    assert panel.bars.entries[0][1] == "B" and "“y”" in panel.title.text()


def test_an_encoder_decoder_opens_on_cross_attention_and_the_bar_switches_parts(make_window, qtbot):
    translate = _bundled("translate")
    win = _ready(make_window, qtbot, model=str(translate), text="the big dog sees a small cat")
    bar = win.part_bar
    assert win.selection.part == "cross" and bar.buttons["cross"].isChecked()  # the alignment first
    assert not bar.isHidden() and all(bar._action_of(b).isVisible() for b in bar.buttons.values())
    qtbot.waitUntil(lambda: bool(win.views_area.views), timeout=30000)
    head_map = win.views_area.docks["HeadMapView"].widget()
    qtbot.waitUntil(lambda: "cross-attention" in head_map.heatmap.title.text, timeout=10000)
    QTest.mouseClick(bar.buttons["enc"], Qt.MouseButton.LeftButton)
    assert win.selection.part == "enc"
    qtbot.waitUntil(lambda: "encoder self-attention" in head_map.heatmap.title.text, timeout=10000)
    assert head_map.heatmap.bottom.labels == win.trace.src_tokens

    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.load_model("tiny-encoder")  # one kind of attention: no bar, back to self-attention
    assert bar.isHidden() and win.selection.part == "self"


def test_a_view_behind_a_tab_catches_up_when_shown(make_window, qtbot):
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    qtbot.waitUntil(lambda: bool(win.views_area.views), timeout=60000)
    area = win.views_area
    shown = area.visible_views()
    hidden = [dock for dock in area.docks.values() if dock.widget() not in shown]
    assert shown and hidden  # the default layout tabs some views behind others
    dock = hidden[0]
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        win.input_panel.set_text("the cat sat")
    assert all(v.trace is win.trace for v in shown)
    # not drawn while nobody could see it (perhaps not even built yet: a placeholder until first shown)
    assert getattr(dock.widget(), "trace", None) is not win.trace
    dock.raise_()
    qtbot.waitUntil(lambda: dock.widget() in area.visible_views(), timeout=5000)
    assert dock.widget().trace is win.trace


def test_token_strip_draws_short_inputs_cached_and_long_ones_in_view(qtbot):
    from attnviz.gui.panels.input_tokens import MAX_CACHED_WIDTH, TokenStrip
    from attnviz.text.token_strip import StripData

    strip = TokenStrip()
    qtbot.addWidget(strip)
    strip.resize(600, 90)
    strip.show()
    chips = strip.strip
    chips.set_data(StripData(["[CLS]", "the", "cat"], [2, 7, 9]))
    first = chips.grab().toImage()
    assert chips._pixmap is not None  # drawn once, reused by the next paints
    chips.set_selected(1)  # a new selection redraws the chips
    assert chips._pixmap is None
    assert chips.grab().toImage() != first
    many = [f"t{i}" for i in range(3000)]
    chips.set_data(StripData(many, list(range(3000))))
    assert chips.width() > MAX_CACHED_WIDTH
    strip.horizontalScrollBar().setValue(strip.horizontalScrollBar().maximum())
    image = strip.viewport().grab().toImage()
    colours = {image.pixel(x, 20) for x in range(0, image.width(), 7)}
    assert len(colours) > 2  # the chips at the end are drawn


def test_the_model_list_settles_after_fitting_its_columns(make_window, qtbot, assets, monkeypatch):
    """Fitting the columns must not resize the list into fitting them again: a horizontal scroll bar that came
    and went with the columns made the refit choose the other columns for ever (the window never drew its
    trace). After the trace is shown, more event-loop turns cause no refit (the loop refitted every turn)."""
    from attnviz.gui.panels.model_panel import ModelPanel

    calls = []
    original = ModelPanel._fits  # every fitting pass tries column sets through it
    monkeypatch.setattr(ModelPanel, "_fits",
                        lambda self, shown, width, form: (calls.append(1), original(self, shown, width, form))[1])
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat")
    qtbot.waitUntil(lambda: len(win.model_panel.names()) == 4, timeout=30000)
    before = len(calls)
    for _ in range(50):
        QApplication.processEvents()
    assert len(calls) == before, f"{len(calls) - before} refits while nothing changed"
