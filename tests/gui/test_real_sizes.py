"""Views at real model sizes (issue 36 finding 11): random-weight Llama-family models with the layers × heads
of SmolLM-135M (30 × 9), Qwen2-0.5B (24 × 14) and Llama-8B (32 × 32), built from configs (tests/gui/
real_sizes.py). The All heads grid shows a page of heads at a legible size rather than shrinking every
tile until the numbers overlap; every page is reachable; the matrix form's GQA diagram shows every head."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import real_sizes  # noqa: E402
from layout_audit import MIN_PX, pt_to_px  # noqa: E402

pytestmark = pytest.mark.slow


# 48 tokens: a matrix of d_model columns beside three of d_head asks for most of the row
LONG_TEXT = "the quick brown fox jumps over the lazy dog because it was tired and the cat sat on the mat"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    return {name: real_sizes.build(name, root / name) for name in real_sizes.SHAPES}


@pytest.fixture(scope="module")
def traces(folders):
    return {name: real_sizes.trace_of(folder) for name, folder in folders.items()}


@pytest.fixture(scope="module")
def long_32(folders):
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model(str(folders["32x32"]), device="cpu"), text=LONG_TEXT)


def _slide(name, trace, state):
    """``make_figure(name)`` in the style `attnviz export` gives it, rendered as it renders a 1920×1080 PNG."""
    from attnviz.figures.registry import export_style, make_figure
    from attnviz.figures.render import ExportOptions, render_image

    style = export_style("light", "viridis", True, 1.0)
    view, _ = make_figure(name, trace, state, style, None)
    render_image(view, ExportOptions(width=1920, height=1080))
    return view


@pytest.mark.parametrize("name", list(real_sizes.SHAPES))
def test_all_heads_pages_keep_every_head_legible(qtbot, traces, name):
    from attnviz.gui.views.model_view import MIN_TILE_PX, PITCH_X, ModelView
    from attnviz.selection import Selection

    trace = traces[name]
    L, H, _ = real_sizes.SHAPES[name]
    assert (trace.layers_in("self"), trace.n_heads) == (L, H)
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(1200, 900)  # the All heads dock of a 1920×1080 window, about
    view.show()
    view.set_trace(trace)
    view.ensure_current()
    for _ in range(5):
        QApplication.processEvents()
    (x0, x1), _ = view.vb.viewRange()
    tile_px = view.vb.width() / (x1 - x0)  # px per tile side
    assert tile_px >= MIN_TILE_PX - 0.5, f"{name}: tiles of {tile_px:.1f} px"
    note_px = pt_to_px(view.notes.font.pointSizeF())
    assert note_px >= MIN_PX - 0.05, f"{name}: notes of {note_px:.1f} px"
    widest = max(view.style.metrics(1.0).horizontalAdvance(t) for t in view.notes.all_texts()) \
        * view.notes.font.pointSizeF() / view.style.font_pt(1.0)
    assert widest < PITCH_X * tile_px, f"{name}: notes {widest:.0f} px wide under tiles {PITCH_X * tile_px:.0f} px apart"
    rows, cols = view.page_shape()
    assert rows < L and view.page_text() in view.caption.text  # the caption says which page
    # every layer reachable page by page; the selected head's page follows the selection
    seen = set()
    while True:
        seen.update(view.page_ranges()[0])  # fixed pages: the last holds what is left
        if not view.page_buttons["down"].isEnabled():
            break
        view.page_buttons["down"].click()
    assert seen == set(range(L))
    view.selection.update(layer=L - 1, head=H - 1)
    assert view._page[0] <= L - 1 < view._page[0] + rows and view._page[1] <= H - 1 < view._page[1] + cols


def test_a_small_model_is_one_page(qtbot):
    """The bundled models' grids fit whole: no page buttons, no page in the title (negative control)."""
    from attnviz.gui.views.model_view import ModelView
    from attnviz.io import bundled_models
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    if "coref" not in bundled_models():
        pytest.skip("the bundled models are not built (make assets)")
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(1200, 900)
    view.show()
    view.set_trace(run_trace(load_model("coref", device="cpu"), text="the cat sat on the mat"))
    view.ensure_current()
    QApplication.processEvents()
    assert view.page_shape() == view._grid_shape and view.page_text() == ""
    assert not any(b.isVisible() for b in view.page_buttons.values())


@pytest.mark.parametrize("heads, kv", [(9, 3), (14, 2), (32, 8), (32, 1)])
def test_gqa_diagram_draws_every_head_inside_its_width(qtbot, heads, kv):
    """Every query head and key/value head has a box inside the diagram, none overlapping (it showed Q0–Q3
    and KV0 of a 9-head model); a one-KV (MQA) model's single box spans its heads."""
    from attnviz.gui.walkthrough.gqa_diagram import GqaDiagram

    d = GqaDiagram()
    qtbot.addWidget(d)
    d.set_heads(heads, kv, heads - 1)
    d.resize(max(d.minimumSizeHint().width(), 1000), d.sizeHint().height())
    q, kvb = d.boxes()
    assert len(q) == heads and len(kvb) == kv
    for box in q + kvb:
        assert box.left() >= 0 and box.right() <= d.width(), box
    assert all(a.right() <= b.left() for a, b in zip(q, q[1:]))  # side by side, in order


def test_matrix_form_export_shows_the_whole_gqa_diagram(qapp, traces):
    """`export --view matrix-form` of the 32-head model: the diagram laid out inside the slide, every box in."""
    from PySide6.QtCore import QRectF

    from attnviz.figures.render import layout_scale
    from attnviz.figures.registry import make_figure
    from attnviz.selection import SelectionState

    trace = traces["32x32"]
    view, _ = make_figure("matrix-form", trace, SelectionState(layer=0, head=30, query=None), None, None)
    try:
        from attnviz.gui.walkthrough.figure import _settle

        scale = layout_scale(1920, 1080)
        fig = view.figure_widget
        fig.resize(int(1920 / scale), int(1080 / scale))
        _settle(fig)
        d, board = view.gqa, view.board
        assert board.width() >= 1000  # laid out as the slide is (1067 px, drawn ×1.8)
        inside = QRectF(board.rect()).contains(QRectF(d.geometry()))
        q, _ = d.boxes()
        assert d.isVisibleTo(board) and inside and len(q) == 32 and q[-1].right() <= d.width()
    finally:
        view.close()
        view.deleteLater()


def test_many_heads_export_is_whole_and_to_scale_at_32_heads(qapp, long_32):
    """`export --view many-heads` of the 32-head model: all 32 Z blocks inside the figure, equally wide, the
    concatenation as wide as W_O is tall, A as wide as W_O (one column unit)."""
    from attnviz.selection import SelectionState

    view = _slide("many-heads", long_32, SelectionState(layer=0, head=30, query=None))
    try:
        fig = view.concat_figure
        fig.grab()  # painted once: rects are what was drawn
        r = fig.rects
        u = r["W_O"].width() / 512  # the column unit drawn (fig.unit is that of the last size measured)
        zs = [r[f"Z{h}"] for h in range(32)]
        assert all(z.width() == pytest.approx(16 * u) for z in zs)
        assert zs[-1].right() - zs[0].left() == pytest.approx(r["W_O"].height())
        assert r["A"].width() == pytest.approx(r["W_O"].width()) == pytest.approx(512 * u)
        for name, rect in r.items():
            assert 0 <= rect.left() and rect.right() <= fig.width() + 1e-6, name
        from PySide6.QtCore import QPoint

        right = fig.mapTo(view.figure_widget, QPoint(fig.width(), 0)).x()
        assert right <= view.figure_widget.width()  # the figure itself inside the slide: nothing cut at the right
    finally:
        view.close()
        view.deleteLater()


@pytest.mark.parametrize("heads, kv", [(14, 2), (32, 8)])
def test_gqa_diagram_numbers_every_head_legibly_when_boxes_are_narrow(qtbot, heads, kv):
    """Presented (F5's large type) or in a narrow window, 32 query heads get boxes too narrow for "31" in the
    diagram's font: every box still carries its number, in a font of at least the legible floor (it drew none
    from 10 on; seen in the app's Matrix form of the 32 × 32 model)."""
    from PySide6.QtGui import QFontMetricsF

    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.walkthrough.gqa_diagram import GqaDiagram

    from PySide6.QtWidgets import QWidget

    screen = QWidget()  # the presented figure's window: 1080 lines (the presenting floor scales with it)
    qtbot.addWidget(screen)
    screen.resize(1920, 1080)
    d = GqaDiagram(compose_style("light", True, "viridis", lines=1080), screen)
    d.set_heads(heads, kv, 9)
    big = QFontMetricsF(d.style.font(1.1))
    step = big.horizontalAdvance("31") + 2  # a box 2 px narrower than the number needs in the diagram's font
    d.resize(int(d._label_width() + 4 + heads * step), d.sizeHint().height())
    q, kvb = d.boxes()
    assert d._text(q[heads - 1], "Q", heads - 1, big) == ""  # the condition: the diagram's font does not fit
    for prefix, boxes in (("Q", q), ("KV", kvb)):
        for i, box in enumerate(boxes):
            text, font = d.label(box, prefix, i)
            assert text in (f"{prefix}{i}", str(i)), (prefix, i, text)
            assert pt_to_px(font.pointSizeF()) >= MIN_PX - 0.05
            assert QFontMetricsF(font).horizontalAdvance(text) <= box.width()
