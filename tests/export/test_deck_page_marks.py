"""Marks of the lesson deck's pages as they print (issue 36): a caption's indices drawn as subscripts ("concat(Z)·W_O"
printed its underscore), one head named "head 0" (the token-lines title read "heads 0"), and the causal mask's M
drawn with its hatch alone where its "0" / "−∞" would be under the export's floor (19 tokens: 8 px smudges, the
cell size was read from the view box's height while the square map is bound by its width). Each has a control."""

from __future__ import annotations

import os
import re
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _texts(path) -> list[str]:
    """Every text element drawn in an SVG written by Qt."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("caption, has_index", [("one output: concat(Z)·W_O is the layer's output", True),
                                                ("a caption without an index (a_b_c stays)", False)])
def test_caption_indices_are_subscripts(qapp, tmp_path, caption, has_index):
    from PySide6.QtWidgets import QLabel

    from attnviz.figures.render import ExportOptions, export_widget

    export_widget(QLabel("figure"), tmp_path / "c.svg", ExportOptions(width=960, height=540, caption=caption))
    texts = "".join(_texts(tmp_path / "c.svg"))
    if has_index:
        assert "W_O" not in texts and "concat(Z)·W" in texts and "layer's output" in texts, texts
    else:  # control: snake_case is not an index, and a plain caption is drawn as before
        assert "a_b_c" in texts, texts


def _scene(view: str, **kw):
    from attnviz.lessons.lesson import load_lesson

    scene = next(s for s in load_lesson("attention").scenes if s.view == view)
    return replace(scene, **kw)


def test_one_head_is_named_head(qapp, tmp_path):
    from attnviz.figures.scenes import build_scene_figure

    view, _sel, _cap, _ = build_scene_figure(_scene("token-lines"), measure=False)
    try:
        title = view.title_item.text
        assert "head 0" in title and "heads 0" not in title, title
    finally:
        view.close()


def _mask_m_white(qapp, tmp_path, text: str) -> int:
    """Near-white pixels inside the causal mask's M (its cells are purple or hatched grey; its glyphs white)."""
    from PIL import Image

    from attnviz.figures.render import ExportOptions
    from attnviz.figures.scenes import export_scene

    export_scene(_scene("causal-mask", text=text), tmp_path / "m.png", ExportOptions(title="mask", caption="x"))
    rgb = np.asarray(Image.open(tmp_path / "m.png").convert("RGB")).astype(int)
    left = rgb[:, : rgb.shape[1] // 3]
    purple = (np.abs(left - np.array([0x44, 0x01, 0x54])).sum(axis=2) < 40)
    ys, xs = np.nonzero(purple)
    box = left[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    return int((box.min(axis=2) > 200).sum())


def test_mask_glyphs_under_the_floor_are_left_out(qapp, tmp_path):
    assert _mask_m_white(qapp, tmp_path, "dragonflydragonfly") == 0  # 19 tokens: the hatch alone


def test_mask_glyphs_large_enough_are_drawn(qapp, tmp_path):
    assert _mask_m_white(qapp, tmp_path, "drag") > 50  # control: 5 tokens, "0" and "−∞" legible and drawn


@pytest.mark.parametrize("view, index", [("scale-reason", "d_k"), ("scale-training", "d_k"), ("path-length", "x_t")])
def test_figure_indices_are_subscripts(qapp, tmp_path, view, index):
    """The figures' own titles, notes and axis labels (deck pages 7–9 printed "√d_k", "d_k (log scale)", "∂ x_t")."""
    from attnviz.figures.render import ExportOptions, export_widget
    from attnviz.figures.scenes import build_scene_figure

    figure, _sel, _cap, _ = build_scene_figure(_scene(view), measure=False)
    try:
        export_widget(figure, tmp_path / "f.svg", ExportOptions(width=1920, height=1080))
    finally:
        figure.close()
    texts = _texts(tmp_path / "f.svg")
    assert not any(index in t for t in texts), [t for t in texts if index in t]
    assert any(t.strip() == index[-1] for t in texts), texts  # control: the index is drawn, as its own (smaller) text
