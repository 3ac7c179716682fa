"""A tiny Hugging Face encoder–decoder in the app: the three-part bar, rows labelled by the produced
token, the target field (re-runs with the decoder reading the typed output; a bad one clears the views
with a notice)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.hf_encdec.factories import SOURCE, TARGET, make_encdec


@pytest.fixture
def t5_folder(tmp_path):
    pytest.importorskip("transformers")
    return make_encdec("t5", tmp_path / "t5-tiny", seed=3)


def _ready(make_window, qtbot, **kwargs):
    win = make_window(start=False, **kwargs)
    with qtbot.waitSignal(win.trace_shown, timeout=90000):
        win.start()
    return win


def test_hf_encoder_decoder_opens_with_three_parts_and_a_target(make_window, qtbot, assets, t5_folder):
    win = _ready(make_window, qtbot, model=str(t5_folder), text=SOURCE)
    trace, bar = win.trace, win.part_bar
    assert trace.kind == "encoder-decoder" and trace.meta["hf_architecture"] == "T5ForConditionalGeneration"
    assert win.selection.part == "cross" and bar.buttons["cross"].isChecked()
    assert not bar.isHidden() and all(bar._action_of(b).isVisible() for b in bar.buttons.values())
    assert not win.input_panel.target_row.isHidden() and win.input_panel.target is None
    assert trace.meta["decoder_input"] == "greedy"
    qtbot.waitUntil(lambda: bool(win.views_area.views), timeout=30000)
    head_map = win.views_area.docks["HeadMapView"].widget()
    qtbot.waitUntil(lambda: "cross-attention" in head_map.heatmap.title.text, timeout=10000)

    with qtbot.waitSignal(win.trace_shown, timeout=60000):  # the decoder reads the typed output
        win.input_panel.target_row.edit.setText(TARGET)
    trace = win.trace
    assert trace.meta["decoder_input"] == "target" and trace.tokens[1:-1] == TARGET.split()
    qtbot.waitUntil(lambda: head_map.trace is trace, timeout=10000)
    rows = head_map.heatmap.left.labels
    assert rows[0] == "→ le" and rows[5] == "→ tapis" and rows[-1] == "(end): nothing written"
    assert head_map.heatmap.bottom.labels == trace.src_tokens
    # the typed output is not the model's: the panel says the decoder was given it
    assert win.prediction_panel.output.text() == f"decoder reads (given): {TARGET}"

    for part, title in (("enc", "· encoder self-attention"), ("self", "· decoder self-attention"),
                        ("cross", "· cross-attention")):
        QTest.mouseClick(bar.buttons[part], Qt.MouseButton.LeftButton)
        assert win.selection.part == part
        qtbot.waitUntil(lambda t=title: t in head_map.heatmap.title.text, timeout=10000)
        labels = trace.src_tokens if part == "enc" else list(trace.tokens)
        if part != "cross":
            assert head_map.heatmap.left.labels == labels

    from attnviz.gui.window.scene_actions import apply_scene, current_scene

    scene = current_scene(win)  # File ▸ Save scene keeps what the decoder read
    assert scene.target == TARGET and scene.text == SOURCE
    win.input_panel.target_row.set_target("")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):  # reopening it gives the same decoder input
        apply_scene(win, scene)
    assert win.trace.tokens == trace.tokens and win.input_panel.target == TARGET

    long_target = " ".join(["le"] * 600)  # more positions than the decoder takes: a notice, no stale figure
    win.input_panel.target_row.edit.setText(long_target)
    qtbot.waitUntil(lambda: "target has" in win.notice.text, timeout=30000)
    assert win.trace is None and head_map.trace is None
    with qtbot.waitSignal(win.trace_shown, timeout=60000):  # emptied: the model's own output again
        win.input_panel.target_row.edit.clear()
    assert win.trace.meta["decoder_input"] == "greedy"


def test_a_scene_opened_at_start_sets_the_target_before_the_first_run(make_window, qtbot, assets, t5_folder):
    """``attnviz scene.json`` / File ▸ Open scene on another model: the target waits in ``_first`` for the
    model to load, like the text, and the first run already reads it."""
    win = make_window(start=False, model=str(t5_folder), text=SOURCE)
    win.state.model.first["target"] = TARGET  # what scene_actions.open_scene_at_start / apply_scene put there
    with qtbot.waitSignal(win.trace_shown, timeout=90000):
        win.start()
    assert win.trace.meta["decoder_input"] == "target" and win.trace.tokens[1:-1] == TARGET.split()
    assert win.input_panel.target == TARGET


def test_the_bundled_translate_model_takes_a_target_too(make_window, qtbot, assets):
    from pathlib import Path

    translate = Path(__file__).resolve().parents[2] / "assets" / "models" / "translate"
    if not (translate / "config.json").exists():
        pytest.skip("the bundled translate model is not built")
    win = _ready(make_window, qtbot, model=str(translate), text="the big dog sees a small cat")
    assert not win.input_panel.target_row.isHidden()
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.input_panel.target_row.edit.setText("na vidas")
    assert win.trace.tokens == ["[BOS]", "na", "vidas", "[EOS]"]
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.load_model("tiny-encoder")  # one kind of attention: no target field
    assert win.input_panel.target_row.isHidden() and win.input_panel.target is None
