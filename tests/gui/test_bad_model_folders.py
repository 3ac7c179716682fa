"""Issue 14, item 8: a model folder that fails validation is a one-line notice; the previous model stays
loaded and usable, and the window keeps its size (the error's ``details`` hold the long version)."""

from __future__ import annotations

import json
import shutil

import pytest


def _ready(make_window, qtbot, **kwargs):
    win = make_window(start=False, **kwargs)
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    return win


def _broken(assets, tmp_path, edit):
    bad = tmp_path / "broken"
    shutil.copytree(assets / "models" / "tiny-encoder", bad)
    doc = json.loads((bad / "config.json").read_text())
    edit(doc)
    (bad / "config.json").write_text(json.dumps(doc))
    return bad


CASES = {
    "tokenizer missing": (lambda d: d.pop("tokenizer"), "has no tokenizer"),
    "task of another kind": (lambda d: d.update(task="digits"), "trains a vit model"),
    "weights of another shape": (lambda d: d["model"].update(d_model=32), "do not match its config.json"),
    "n_layers 1e9": (lambda d: d["model"].update(n_layers=10**9), "n_layers=1,000,000,000"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_invalid_folder_is_a_short_notice_and_the_previous_model_stays(case, make_window, qtbot, assets, tmp_path):
    edit, expected = CASES[case]
    win = _ready(make_window, qtbot, model="tiny-encoder", text="the cat sat")
    # large enough for every page's minimum width (the Training and Walkthrough pages, built after start,
    # raise it to ~1040 px), so only the notice could change the size
    win.resize(1500, 900)
    qtbot.waitUntil(lambda: win.size().width() == 1500, timeout=10000)
    before, size = win.loaded, win.size()
    bad = _broken(assets, tmp_path, edit)
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.load_model(str(bad))
    text, level = got.args
    assert level == "error" and expected in text and "\n" not in text
    assert win.loaded is before and win.size() == size, (size, win.size(), text)
    with qtbot.waitSignal(win.trace_shown, timeout=30000) as shown:  # the previous model still runs
        win.input_panel.set_text("a dog")
    assert shown.args[0].tokens == ["[CLS]", "a", "dog"]
