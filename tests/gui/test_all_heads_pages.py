"""The All heads grid at real model sizes, checked from what its items paint (issue 36, Deliver 5): for the
30 × 9, 24 × 14 and 32 × 32 models, docked (the dock of a 1920×1080 window) and presented (F5 on a 1080-line
screen), every head on the page is a whole tile of at least ``MIN_TILE_PX`` inside the view, its number is
drawn under it in a font of at least 12 px, no number runs into another number or a tile, nothing is painted
outside the view (a cut row of tiles whose numbers were hidden, or read as the next row's), and the axes name
exactly the page's layers and heads. A small model's grid is one page (the negative control of paging)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
import numpy as np  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import real_sizes  # noqa: E402
from layout_audit import MIN_PX, pt_to_px  # noqa: E402

pytestmark = pytest.mark.slow

DOCKED = (740, 700)  # the All heads dock of a 1920×1080 window (right-hand group), about
PRESENTED = (1920, 1080)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    root = tmp_path_factory.mktemp("pages")
    return {name: real_sizes.trace_of(real_sizes.build(name, root / name)) for name in real_sizes.SHAPES}


def _view(qtbot, trace, size, presenting: bool, lines: int = 1080):
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.views.model_view import ModelView
    from attnviz.selection import Selection

    style = compose_style("light", presenting, "viridis", lines=lines if presenting else None)
    view = ModelView(selection=Selection(), style=style)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_trace(trace)
    view.ensure_current()
    for _ in range(5):
        QApplication.processEvents()
    return view


def _painted_scene_rect(item, view_rect: QRectF) -> QRectF:
    """The scene rectangle of every pixel ``item`` paints (painted into an image, as on screen). The image covers
    the item's own bounding rectangle and the view with a margin (what it could paint over), not the whole scene
    (a 32 × 32 grid's scene made a ~1 GB image: 50 s a check)."""
    from PySide6.QtGui import QTransform

    region = item.sceneBoundingRect().united(view_rect).adjusted(-50, -50, 50, 50).toAlignedRect()
    image = QImage(region.width(), region.height(), QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    # what paint() is given in a scene, moved so the region's corner is the image's
    painter.setWorldTransform(item.sceneTransform() * QTransform.fromTranslate(-region.left(), -region.top()))
    item.paint(painter, None, None)
    painter.end()
    alpha = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4)[..., 3]
    xs, ys = np.flatnonzero(alpha.any(axis=0)), np.flatnonzero(alpha.any(axis=1))  # columns, rows painted
    if not len(xs):
        return QRectF()
    return QRectF(xs[0] + region.left(), ys[0] + region.top(), xs[-1] + 1 - xs[0], ys[-1] + 1 - ys[0])


def page_problems(view, what: str) -> list[str]:
    """What is wrong with the page of heads on screen, measured from the scene."""
    from attnviz.gui.views.model_view import MIN_TILE_PX

    out = []
    vb_rect = view.vb.sceneBoundingRect().adjusted(-1, -1, 1, 1)
    for name, item in (("tiles", view.grid), ("numbers", view.notes)):
        painted = _painted_scene_rect(item, vb_rect)
        if painted.isEmpty():
            out.append(f"{what}: no {name} painted")
        elif not vb_rect.contains(painted):
            out.append(f"{what}: {name} painted over {painted.getRect()}, outside the view {vb_rect.getRect()}")
    tiles = view.grid.drawn()
    if not tiles:
        return out + [f"{what}: no tile drawn"]
    rects = {t: view.grid.mapRectToScene(view.grid.tile_rect(*t)) for t in tiles}
    side = min(min(r.width(), r.height()) for r in rects.values())
    if side < MIN_TILE_PX - 0.5:
        out.append(f"{what}: tiles of {side:.1f} px")
    if set(view.notes.drawn()) != set(tiles):
        out.append(f"{what}: {len(view.notes.drawn())} numbers for {len(tiles)} tiles")
    px = pt_to_px(view.notes.font.pointSizeF())
    if px < MIN_PX - 0.05:
        out.append(f"{what}: numbers of {px:.1f} px")
    notes = {t: view.notes.text_rect(*t) for t in view.notes.drawn()}
    for t, r in notes.items():
        if not vb_rect.contains(r):
            out.append(f"{what}: the number of L{t[0]} H{t[1]} is outside the view")
        hits = [u for u, q in notes.items() if u != t and r.intersects(q)] + \
               [u for u, q in rects.items() if r.intersects(q)]
        if hits:
            out.append(f"{what}: the number of L{t[0]} H{t[1]} overlaps {hits[:3]}")
    layers = sorted({t[0] for t in tiles})
    heads = sorted({t[1] for t in tiles})
    if view.left.labels != [f"L{i}" for i in layers] or view.top.labels != [f"H{i}" for i in heads]:
        out.append(f"{what}: the axes name {view.left.labels[:3]}…/{view.top.labels[:3]}… for layers "
                   f"{layers[0]}–{layers[-1]} and heads {heads[0]}–{heads[-1]}")
    return out


@pytest.mark.parametrize("presenting", [False, True], ids=["docked", "presented"])
@pytest.mark.parametrize("name", list(real_sizes.SHAPES))
def test_every_head_on_the_page_is_whole_and_numbered(qtbot, traces, name, presenting):
    L, H, _ = real_sizes.SHAPES[name]
    view = _view(qtbot, traces[name], PRESENTED if presenting else DOCKED, presenting)
    what = f"{name} {'presented' if presenting else 'docked'}"
    assert view.page_text(), f"{what}: {L} × {H} heads shown on one page"  # paged, not shrunk
    title, caption = view.title_item.text, view.caption.text
    assert view.page_text() in caption and "▲" not in title + caption, f"{what}: {title!r} / {caption!r}"
    problems = page_problems(view, what)
    view.turn_page("down")  # a later page, and one of later heads where there is one
    view.turn_page("right")
    for _ in range(5):  # the axes' new labels (L10…) are wider: the layout settles in a later turn
        QApplication.processEvents()
    problems += page_problems(view, what + " (next page)")
    # a click on an axis label selects that page's layer and head, not the first page's
    view.left.on_click(0)
    view.top.on_click(0)
    state = view.selection.state
    assert (state.layer, state.head) == view._page, f"{what}: a click selected {(state.layer, state.head)}"
    assert not problems, "\n".join(problems)


def test_a_small_grid_is_one_whole_page(qtbot, assets):
    """Negative control: a 2 × 4 model is one page, every head drawn, and the same checks pass."""
    from attnviz.runtime import load_model, run_trace

    view = _view(qtbot, run_trace(load_model("tiny-decoder", device="cpu"), text="the cat sat on the mat"),
                 DOCKED, False)
    assert view.page_text() == "" and len(view.grid.drawn()) == view._grid_shape[0] * view._grid_shape[1]
    assert page_problems(view, "tiny-decoder") == []


def _lines(label) -> int:
    """Lines a title or caption item is drawn in (its text wrapped to the width it has)."""
    doc = label.item.document()
    doc.setTextWidth(label.item.textWidth())
    n, block = 0, doc.begin()
    while block.isValid():
        n += block.layout().lineCount()
        block = block.next()
    return n


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)], ids=["1080", "720"])
@pytest.mark.parametrize("name", list(real_sizes.SHAPES))
def test_presented_title_is_one_line_with_the_detail_in_a_caption(qtbot, traces, name, size):
    """F5 fills the screen with the figure: the title is one line ("All heads · self-attention"), which page
    and what the numbers are go in a caption of at most two lines (the title holding all of it wrapped to
    7 lines at 1280×720). The caption's text is measured as drawn, in the figure's width."""
    view = _view(qtbot, traces[name], size, True, lines=size[1])
    what = f"{name} presented at {size[0]}×{size[1]}"
    assert view.page_text() and view.page_text() in view.caption.text, what
    assert "entropy" in view.caption.text and "entropy" not in view.title_item.text, what
    assert _lines(view.title_item) == 1, f"{what}: title in {_lines(view.title_item)} lines"
    assert 1 <= _lines(view.caption) <= 2, f"{what}: caption in {_lines(view.caption)} lines"
    assert not page_problems(view, what)  # the caption's height came out of the grid's, not over it


def _exported_caption(view, size=(1920, 1080)) -> str:
    """The caption as the export draws it: render_figure into an image, the caption read while laid out."""
    seen = []
    set_caption = view._set_caption
    view._set_caption = lambda text: (seen.append(text), set_caption(text))
    image = QImage(*size, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        view.render_figure(painter, QRectF(0, 0, *size), 1.8)
    finally:
        painter.end()
        del view._set_caption
    return next((t for t in seen if "this slide" in t), seen[0] if seen else "")


def _named(text: str, word: str, n: int) -> set[int]:
    """Every index named after ``word`` in ``text`` ("layers 0–4 and 10–29" → {0..4, 10..29}), of ``n``."""
    import re

    out = set()
    for chunk in re.findall(rf"{word} ([0-9–]+(?: and [0-9–]+)*)", text):
        for span in chunk.split(" and "):
            a, _, b = span.partition("–")
            out.update(range(int(a), int(b or a) + 1))
    return out & set(range(n))


@pytest.mark.parametrize("name", list(real_sizes.SHAPES))
def test_an_exported_page_says_which_heads_it_shows_and_where_the_rest_are(qtbot, traces, name):
    """A slide cannot page: its caption names the layers and heads on it and those off it (together every
    layer and head), says how to get the others (--layer/--head, or the app), and offers no page keys as
    its own; the window's caption is its own again after the export."""
    L, H, _ = real_sizes.SHAPES[name]
    view = _view(qtbot, traces[name], DOCKED, False)
    on_screen = view.caption.text
    caption = _exported_caption(view)
    shown, off = caption.split("; not on it: ")[0], caption.partition("; not on it: ")[2]
    assert shown.startswith("this slide: ") and off, f"{name}: {caption!r}"
    for word, n in (("layers", L), ("heads", H)):
        on, rest = _named(shown, word, n), _named(off.split(" (export")[0], word, n)
        if not rest:  # every one of them is on the slide: the caption says so by not listing any
            assert on in (set(), set(range(n))), f"{name}: {word} {sorted(on)} shown, none said to be off"
            continue
        assert on and not on & rest and on | rest == set(range(n)), f"{name}: {word}: {caption!r}"
    assert "--layer" in off and "in the app" in off, caption
    assert view.caption.text == on_screen and "this slide" not in on_screen  # the window's own caption


def test_an_exported_single_page_has_no_page_note(qtbot, assets):
    """Negative control: a 2 × 4 model's slide is the whole grid; its caption is the legend alone."""
    from attnviz.runtime import load_model, run_trace

    view = _view(qtbot, run_trace(load_model("tiny-decoder", device="cpu"), text="the cat sat on the mat"),
                 DOCKED, False)
    caption = _exported_caption(view)
    assert caption.startswith("under each: entropy") and "slide" not in caption, caption
