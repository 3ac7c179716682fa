"""The head map's title of a long input wraps its pooling phrase whole: at 1280×720 the dock's width broke it
before a lone last word ("cells") on a line of its own."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _lines(item) -> list[str]:
    """The lines a title item is laid out in at its text width."""
    doc = item.item.document()
    text, lines = doc.toPlainText(), []
    block = doc.firstBlock()
    layout = block.layout()
    for i in range(layout.lineCount()):
        line = layout.lineAt(i)
        lines.append(text[line.textStart(): line.textStart() + line.textLength()].strip())
    return lines


def _wraps(title: str, qtbot) -> list[list[str]]:
    from attnviz.gui.style import ViewStyle
    from attnviz.gui.widgets.title import make_title, set_title

    item = make_title()
    set_title(item, title, ViewStyle())
    out = []
    item.item.setTextWidth(-1)
    phrase = item.item.document().idealWidth() * 0.55  # wider than the pooling phrase (about half the title)
    for width in range(int(phrase), 1200, 4):  # every dock width the phrase fits in, up to one line
        item.item.setTextWidth(width)
        out.append(_lines(item))
    return out


def test_the_pooled_phrase_wraps_whole(qtbot):
    from attnviz.gui.views.heatmap_data import pooled_phrase

    title = f"Layer 0 · head 1 · self-attention{pooled_phrase(16)}"
    wraps = _wraps(title, qtbot)
    assert any(len(lines) > 1 for lines in wraps)  # the widths tried do wrap it
    for lines in wraps:
        if len(lines) > 1:  # the phrase is one line of its own, never broken inside
            assert any(line.replace("\u00a0", " ").endswith("each drawn cell = max of 16×16 cells") for line in lines), lines
    # the control: the same words with plain spaces leave "cells" alone on a line at some width
    plain = _wraps(title.replace("\u00a0", " "), qtbot)
    assert any(lines[-1] == "cells" for lines in plain)
