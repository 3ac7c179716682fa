"""An exported page's title writes indices as subscripts, as the figures under it do (issue 36): the lesson deck's
"Many heads, one output: concat · W_O" and "Why divide by √d_k" printed the underscore. A title without an index
is drawn as one line of text, as before (the control)."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


def _texts(path) -> list[tuple[str, float]]:
    """(text, font size) of every text element drawn in an SVG written by Qt."""
    svg = path.read_text(encoding="utf-8")
    return [(t, float(size)) for size, t in re.findall(r'<text[^>]*font-size="([\d.]+)"[^>]*>([^<]*)</text>', svg)]


@pytest.mark.parametrize("title, main, index", [("Many heads, one output: concat · W_O", "concat · W", "O"),
                                                ("Why divide by √d_k", "Why divide by √d", "k")])
def test_title_indices_are_subscripts(qapp, tmp_path, title, main, index):
    from PySide6.QtWidgets import QLabel

    from attnviz.figures.render import ExportOptions, export_widget

    label = QLabel("figure")
    export_widget(label, tmp_path / "t.svg", ExportOptions(width=960, height=540, title=title))
    texts = _texts(tmp_path / "t.svg")
    assert not any("_" in t for t, _ in texts), texts
    big = next(size for t, size in texts if t.endswith(main))
    assert any(t == index and size < big for t, size in texts), texts  # a smaller index after the symbol


def test_a_plain_title_is_one_text(qapp, tmp_path):
    from PySide6.QtWidgets import QLabel

    from attnviz.figures.render import ExportOptions, export_widget

    export_widget(QLabel("figure"), tmp_path / "t.svg", ExportOptions(width=960, height=540, title="All queries at once"))
    assert ("All queries at once", pytest.approx(22, abs=8)) in [(t, s) for t, s in _texts(tmp_path / "t.svg")]
