"""Issue 36: translate's source strip highlighted "cat" for the decoder's "→ vidas" (the source the cross-attention
head weights most) with nothing on screen saying why. The strip's title now says what is highlighted and why;
control: a model whose strip holds its own queries (an encoder) says nothing extra."""

from __future__ import annotations

from pathlib import Path

import attnviz

BUNDLED = Path(attnviz.__file__).resolve().parents[1] / "assets" / "models"


def _window(make_window, qtbot, model: str, text: str):
    win = make_window(model=model, text=text)
    qtbot.waitUntil(lambda: win.trace is not None and win.views_installed, timeout=60000)
    return win


def test_the_source_strip_says_why_it_highlights_a_source_token(make_window, qtbot):
    from attnviz.analysis.decoder_positions import attended_source

    win = _window(make_window, qtbot, str(BUNDLED / "translate"), "the big dog sees a small cat")
    trace = win.trace
    from attnviz.analysis.decoder_positions import row_labels

    query = next(i for i, t in enumerate(row_labels(trace, "cross")) if "vidas" in str(t))
    win.selection.update(part="cross", layer=0, head=0, query=query)
    qtbot.wait(20)
    source = trace.src_tokens[attended_source(trace, 0, 0, query)]
    text = win.input_panel.strip_label.text()
    assert f"'{source}' highlighted" in text and "layer 0 · head 0" in text and "'→ vidas'" in text, text
    assert "weights most" in win.input_panel.strip_label.toolTip()  # also where a narrow dock cuts the title
    win.selection.update(query=None)  # nothing highlighted: nothing to explain
    qtbot.wait(20)
    assert "highlighted" not in win.input_panel.strip_label.text()


def test_a_strip_of_the_queries_themselves_says_nothing_extra(make_window, qtbot):  # control
    win = _window(make_window, qtbot, "tiny-encoder", "the cat sat")
    win.selection.update(query=1)
    qtbot.wait(20)
    assert "highlighted" not in win.input_panel.strip_label.text()
