"""The part row shows the one default rule's part from the moment translate loads (issue 36 item 10): it showed
"decoder self-attention" selected until the first run finished and moved it to cross-attention."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "assets" / "models"
TRANSLATE, COREF = MODELS / "translate", MODELS / "coref"


def _record(win) -> list[str]:
    """Every part the row shows while it is on screen, in order (each check of a button, and the row's showing)."""
    bar, shown = win.part_bar, []

    def note(*_args):
        checked = bar.group.checkedButton()
        if bar.isVisible() and checked is not None:
            part = next(p for p, b in bar.buttons.items() if b is checked)
            if not shown or shown[-1] != part:
                shown.append(part)

    bar.group.buttonToggled.connect(note)
    bar.visibilityChanged.connect(note)
    return shown


@pytest.fixture
def translate():
    if not all((m / "config.json").exists() for m in (TRANSLATE, COREF)):
        pytest.skip("the bundled translate and coref models are not built")
    return str(TRANSLATE)


def test_a_launch_on_translate_shows_cross_attention_from_the_start(make_window, qtbot, translate):
    win = make_window(start=False, model=translate, text="the big dog sees a small cat")
    shown = _record(win)
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    assert win.selection.part == "cross"  # the rule's part, once the trace is in
    assert shown == ["cross"], f"the part row showed {shown} between the load and the first trace"


def test_a_switch_from_coref_to_translate_shows_cross_attention_from_the_load(make_window, qtbot, translate):
    win = make_window(start=False, model=str(COREF))
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    assert win.part_bar.isHidden() and win.selection.part == "self"  # coref: one part, no row
    shown = _record(win)
    at_load = []
    win.model_loaded.connect(lambda _ref: at_load.append(list(shown)))
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.load_model(translate)
    assert at_load == [["cross"]], f"at the load the row showed {at_load}"
    assert shown == ["cross"], f"the part row showed {shown} between the load and the first trace"
    assert win.selection.part == "cross"


def test_translate_left_on_decoder_self_attention_comes_back_on_it(make_window, qtbot, translate):
    # negative control of the rule: where the lecturer left translate wins over the rule, on the row too
    win = make_window(start=False, model=translate, text="the big dog sees a small cat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    win.part_bar.buttons["self"].click()
    assert win.selection.part == "self"
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.load_model(str(COREF))
    shown = _record(win)
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.load_model(translate)
    assert win.selection.part == "self"
    assert shown == ["self"], f"the part row showed {shown} between the load and the first trace"
