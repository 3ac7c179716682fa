"""The causal mask's "−∞" reads as minus infinity, not a dash (issue 36 finding 10): fitted to a cell the ∞
is over half the cell wide and a third of it tall (a plain "−∞", whose minus is as wide as the ∞, gave
0.34 × 0.22: the control), and in the drawn figure every masked cell of M carries it."""

from __future__ import annotations

from PySide6.QtGui import QFont, QPainterPath


def _infinity_in_cell(outline, infinity_width_px, infinity_height_px):
    """The ∞'s width and height in cell units when ``outline`` is fitted to a cell as the view fits it."""
    from attnviz.gui.views.cell_glyphs import cell_scale

    k = cell_scale(outline.boundingRect())
    return infinity_width_px * k, infinity_height_px * k


def test_the_infinity_fills_the_cell(qapp):
    from attnviz.gui.views.cell_glyphs import MAX_W, glyph_outline

    inf = glyph_outline("∞").boundingRect()
    composed = glyph_outline("−∞")
    w, h = _infinity_in_cell(composed, inf.width(), inf.height())
    assert w >= 0.5 and h >= 0.3, (w, h)
    assert w < MAX_W  # inside the cell
    font = QFont()  # the control: the font's own "−∞" fitted as before (half a cell high, 0.74 wide)
    font.setBold(True)
    font.setPixelSize(100)
    plain = QPainterPath()
    plain.addText(0.0, 0.0, font, "−∞")
    box = plain.boundingRect()
    k0 = min(0.5 / box.height(), 0.74 / box.width())
    w0, h0 = inf.width() * k0, inf.height() * k0
    assert w0 < 0.4 and h0 < 0.25 and w > 1.4 * w0, (w0, h0)


def _mask_view(qtbot, text: str, width: int, height: int):
    """The causal-mask scene's view of charlm's trace of ``text``, shown at ``width`` × ``height``, its cell
    texts made."""
    from attnviz.gui.views.lesson_views import CausalMaskView
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    trace = run_trace(load_model("charlm", device="cpu"), text=text)
    view = CausalMaskView(Selection())
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    view.set_trace(trace)
    qtbot.waitUntil(lambda: bool(view._texts), timeout=10000)
    return view, trace


def test_every_masked_cell_of_the_mask_says_minus_infinity(qtbot):
    view, trace = _mask_view(qtbot, "the cat sat", 1600, 800)
    T = len(trace.tokens)
    ink = [it.path() for it in view._texts if it.zValue() == 7]
    drawn = sum(p.elementCount() for p in ink)
    from attnviz.gui.views.cell_glyphs import glyph_outline

    per_inf, per_zero = glyph_outline("−∞").elementCount(), glyph_outline("0").elementCount()
    above = T * (T - 1) // 2
    assert drawn == above * per_inf + (T * T - above) * per_zero  # every cell written, −∞ exactly above
    assert all(t.isVisible() for t in view._texts)  # 3 words in a large view: glyphs large enough to read


def test_cell_text_shows_only_where_a_glyph_reaches_the_legible_floor(qtbot):
    """19 tokens in a small map made the mask's "−∞" 6 px (the live lesson at 1280×720): then no glyphs (the
    title and the hatch say it); the same view large enough writes them again."""
    view, _ = _mask_view(qtbot, "dragonflydragonfly", 700, 380)
    qtbot.waitUntil(lambda: not any(t.isVisible() for t in view._texts), timeout=10000)
    view.resize(2400, 1400)
    qtbot.waitUntil(lambda: all(t.isVisible() for t in view._texts), timeout=10000)


def test_the_mask_folds_into_s_plus_m_while_its_glyphs_cannot_be_read(qtbot):
    """M without legible glyphs repeated S + M's hatch and took a third of the width (the live lesson at
    1280×720: S + M and P ~180 px with ~9 px labels): it folds, S + M's title names the hatch M, and the
    two maps are wider; a view large enough brings M back (the control)."""
    view, _ = _mask_view(qtbot, "dragonflydragonfly", 700, 380)
    qtbot.waitUntil(lambda: view.mask_folded and sum(m.isVisible() for m in view.maps) == 2, timeout=10000)
    assert "M: −∞, hatched" in view.maps[0].title.text and view.maps[1].title.text.startswith("P =")
    assert view.maps[0].bar.show_masked  # the hatch that stands for M
    view.resize(2400, 1400)
    qtbot.waitUntil(lambda: not view.mask_folded and sum(m.isVisible() for m in view.maps) == 3, timeout=10000)
    assert view.maps[0].title.text.startswith("M: ") and all(t.isVisible() for t in view._texts)
