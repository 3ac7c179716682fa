"""What a lecturer at the back of the room can read, measured from the drawn scene (not from pixels).

Each check takes a figure as it is laid out for its target (the screen, a 1920×1080 slide) and the factor
from its layout to the target's pixels (an export is laid out at 1067×600 and drawn ×1.8), and returns a
list of problems in words (empty: fine):

* titles name what is shown: not empty, not "no input yet", not a failure message;
* axis labels are drawn: every token label of an axis (the selected one always), none thinned away while
  there are at most ``FULL_LABELS`` of them, in a font of at least ``min_px`` target pixels;
* side-by-side maps share one colour scale unless their caption or bar says they do not;
* a strip (a one-row matrix of the walkthrough) is at least ``MIN_STRIP_PX`` tall, and its row label is
  not taller than the strip it names.
"""

from __future__ import annotations

import re

from label_ink import ink_px, label_px, pt_to_px

__all__ = ["MIN_PX", "PRESENT_PX", "MIN_STRIP_PX", "FULL_LABELS", "scene_problems", "grid_problems",
           "panel_scale_problems", "presented_label_problems", "pt_to_px", "square_map_problems",
           "row_label_problems", "stage_text_problems", "bar_overflow_problems",
           "axis_title_overlaps", "scroll_problems", "cut_row_label_problems", "painted_text_problems",
           "cut_title_problems"]

MIN_PX = 12.0  # the smallest text a back row reads on a 1920×1080 projection
PRESENT_PX = 20.0  # presenting (F5, lessons) on a 1080-line screen: axis labels for a lecture hall's back row
MIN_STRIP_PX = 14.0  # a strip must be at least a text line tall
FULL_LABELS = 40  # up to this many tokens every label of an axis is drawn at 1920×1080
MAX_MAP_ASPECT = 1.25  # a tokens × tokens map drawn as a heatmap is read as a square: at most this stretched
BAD_TITLES = ("no input yet", "unavailable", "cannot", "error", "Traceback")


def _label_pt(item) -> float | None:
    size = (getattr(item, "opts", {}) or {}).get("size")
    m = re.match(r"([\d.]+)pt", str(size or ""))
    return float(m.group(1)) if m else None


def _title_items(scene):
    import pyqtgraph as pg

    return [it for it in scene.items() if isinstance(it, pg.LabelItem) and it.isVisible() and it.text]


def scene_problems(scene, scale: float, min_px: float | None, what: str) -> list[str]:
    """Titles and token axes of a pyqtgraph scene laid out at its target size (``scale``: layout → target px)."""
    from attnviz.gui.widgets.colour_bar import ColourBarItem
    from attnviz.gui.widgets.token_axis import TokenAxisItem

    problems = []
    titles = _title_items(scene)
    texts = [re.sub(r"<[^>]+>", " ", t.text) for t in titles]
    if not any(t.strip() for t in texts):
        problems.append(f"{what}: no title")
    for t, item in zip(texts, titles):
        if any(bad in t for bad in BAD_TITLES):
            problems.append(f"{what}: title {t.strip()!r} does not name what is shown")
        pt = _label_pt(item)
        if min_px and pt is not None and pt_to_px(pt) * scale < min_px - 0.05:
            problems.append(f"{what}: title {t.strip()[:40]!r} is {pt_to_px(pt) * scale:.1f} px")
    for ax in [it for it in scene.items() if isinstance(it, TokenAxisItem) and it.isVisible() and it.labels]:
        n = len(ax.labels)
        shown = ax.visible_indices()
        if ax.stride > 1 and n <= FULL_LABELS and not ax.major_only:
            problems.append(f"{what}: {ax.orientation} axis draws every {ax.stride}th of {n} labels")
        if ax.selected is not None and ax.selected not in shown and ax.stride == 1 and not ax.major_only:
            problems.append(f"{what}: {ax.orientation} axis does not name the selected token")
        px, verb = label_px(ax.style.font(ax.font_factor), scale, ax.style)
        if min_px and px < min_px - 0.05:
            problems.append(f"{what}: {ax.orientation} axis labels {verb} {px:.1f} px")
    for bar in [it for it in scene.items() if isinstance(it, ColourBarItem) and it.isVisible()]:
        px = pt_to_px(bar.style.font_pt()) * scale
        if min_px and bar.style.colour_bar and px < min_px - 0.05:
            problems.append(f"{what}: colour bar text is {px:.1f} px")
    problems += _overlapping_titles(titles, what)
    return problems


def _overlapping_titles(titles, what: str) -> list[str]:
    """Two titles (or captions) drawn over each other: their text boxes intersect by more than a sliver."""
    boxes = [(re.sub(r"<[^>]+>", " ", t.text).strip()[:30], t.item.sceneBoundingRect()) for t in titles]
    return _overlaps(boxes, f"{what}: titles")


def _overlaps(boxes, prefix: str) -> list[str]:
    """Each pair of (text, scene rect) whose rects intersect by more than a sliver (3 px each way)."""
    out = []
    for i, (a, ra) in enumerate(boxes):
        for b, rb in boxes[i + 1:]:
            inter = ra.intersected(rb)
            if inter.width() > 3 and inter.height() > 3:
                out.append(f"{prefix} {a!r} and {b!r} overlap")
    return out


def grid_problems(grid, scale: float, min_px: float | None, what: str) -> list[str]:
    """A walkthrough / matrix-form grid: every row named (up to 24 rows), labels legible, strips tall."""
    if not grid.isVisibleTo(grid.window()) or not grid.values.size:  # figures are exported off-screen
        return []
    problems = []
    rows = grid.values.shape[0]
    area, _, ch = grid._cells()
    if grid.row_labels and rows <= 24 and grid.row_label_stride() > 1:
        problems.append(f"{what}: {grid.title} names every {grid.row_label_stride()}th of {rows} rows")
    cols = grid.values.shape[1]
    if grid.col_labels and cols <= 24 and grid.col_label_stride() > 1:
        problems.append(f"{what}: {grid.title} names every {grid.col_label_stride()}th of {cols} columns")
    font = grid.row_label_font() if grid.row_labels else grid._fonts()[2]
    for font, used, ink in ((font, grid.row_labels, rows > 1), (grid.col_label_font(), grid.col_labels, True)):
        # the letters' ink; a strip's one row name (x_i, q_i) its type for now: the strip is a label-font line tall
        px, verb = label_px(font, scale, grid.style) if ink else (pt_to_px(font.pointSizeF()) * scale, "are")
        if min_px and used and px < min_px - 0.05:
            problems.append(f"{what}: {grid.title} labels {verb} {px:.1f} px")
    if rows == 1 and grid.values.shape[1] > 1 and ch * scale < MIN_STRIP_PX - 0.05:
        problems.append(f"{what}: strip {grid.title} is {ch * scale:.1f} px tall")
    return problems


SCALE_WORDS = ("own scale", "its own", "own maximum", "each map on its own", "÷ the strip's maximum")


def panel_scale_problems(levels: list[tuple[float, float]], captions: list[str], what: str) -> list[str]:
    """Maps side by side share one colour range unless a caption or bar label says otherwise."""
    if len(levels) < 2 or any(w in c for c in captions for w in SCALE_WORDS):
        return []
    first = levels[0]
    if any(abs(lo - first[0]) > 1e-9 or abs(hi - first[1]) > 1e-9 for lo, hi in levels[1:]):
        return [f"{what}: side-by-side maps on different colour scales {levels} without saying so"]
    return []


def presented_label_problems(widget, min_px: float, what: str, side_by_side: bool = False) -> list[str]:
    """A figure presented full screen: its token axes and matrix labels at least ``min_px`` on screen.

    Only labels of a figure that names every token (an axis shrunk to fit 65 image patches is a map of
    a grid, not text to read, and is held to :data:`MIN_PX` by :func:`scene_problems`), and only a figure
    of one map: several maps side by side (the matrix form, the causal mask's M | S + M | P) share the
    width and are held to :data:`MIN_PX` (known gap: they draw 12–16 px labels presented at 1080 lines),
    unless ``side_by_side`` (the causal mask's maps, which fold M to make the room)."""
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid
    from attnviz.gui.widgets.token_axis import TokenAxisItem

    out = []
    canvas = getattr(widget, "canvas", None)
    axes = [it for it in canvas.scene().items() if isinstance(it, TokenAxisItem) and it.isVisible() and it.labels
            and len(it.labels) <= FULL_LABELS and not it.major_only] if canvas is not None else []
    grids = [g for g in widget.findChildren(MatrixGrid) if g.isVisibleTo(g.window()) and g.values.size]
    if not side_by_side and (sum(ax.orientation == "left" for ax in axes) > 1 or len(grids) > 1):
        return []
    for ax in axes:
        px = pt_to_px(ax.style.font_pt(ax.font_factor))
        if px < min_px - 0.05:
            out.append(f"{what}: {ax.orientation} axis labels are {px:.1f} px presented")
    for grid in grids:
        if max(grid.values.shape) > 24:
            continue
        for font, used in ((grid.row_label_font(), grid.row_labels), (grid.col_label_font(), grid.col_labels)):
            px = pt_to_px(font.pointSizeF())
            if used and px < min_px - 0.05:
                out.append(f"{what}: {grid.title} labels are {px:.1f} px presented")
    return out


def square_map_problems(widget, min_px: float, what: str) -> list[str]:
    """The T×T maps of a walkthrough figure (the grids asking for ``min_side``: Q Kᵀ, scaled, P) drawn as
    squares (cells at most :data:`MAX_MAP_ASPECT` stretched) with row labels of at least ``min_px`` — the
    message of "All queries at once" (a lesson drew them 2.3 : 1 with 12 px labels beside 26 px ones)."""
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    out = []
    for g in widget.findChildren(MatrixGrid):
        if not (g.isVisibleTo(g.window()) and g.values.size and g.min_side and g.row_labels) or g.numbers_shown:
            continue
        _, cw, ch = g._cells()
        if max(cw, ch) > MAX_MAP_ASPECT * min(cw, ch):
            out.append(f"{what}: {g.title} cells are {cw:.1f} × {ch:.1f} px, not square")
        px = pt_to_px(g.row_label_font().pointSizeF())
        if g.values.shape[0] <= 24 and px < min_px - 0.05:
            out.append(f"{what}: {g.title} row labels are {px:.1f} px")
    return out


def row_label_problems(widget, min_px: float, what: str, thinned: bool = False) -> list[str]:
    """Every part of a figure that names token rows (the walkthrough's grids: X, Q, K, V and the T×T maps; the
    many-heads concat) names each of up to 24 rows, in at least ``min_px`` on screen; the concat figure's own
    text (titles, shapes, legends) too. ``thinned``: a page too short for every row (a presented window smaller
    than its screen) may name every k-th row of a grid, in letters inking ``min_px`` (issue 36, Deliver 4)."""
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    out = []
    for g in widget.findChildren(MatrixGrid):
        if not (g.isVisibleTo(g.window()) and g.values.size and g.row_labels) or g.values.shape[0] > 24:
            continue
        if thinned and g.row_label_stride() > 1:
            ink = ink_px(g.row_label_font())
            out += [f"{what}: {g.title} names every k-th row in {ink:.1f} px of ink"] if ink < min_px - 0.05 else []
            continue
        out += _rows_named(g, g.title, g.values.shape[0], min_px, what)
    for c in widget.findChildren(ConcatFigure):
        if not (c.isVisibleTo(c.window()) and c.q_tok) or len(c.q_tok) > 24:
            continue
        out += _rows_named(c, "concat(Z)", len(c.q_tok), min_px, what)
        for font in c._fonts():
            px = pt_to_px(font.pointSizeF())
            if px < min_px - 0.05:
                out.append(f"{what}: the many-heads figure draws {px:.1f} px text")
    return out


def _rows_named(part, title: str, rows: int, min_px: float, what: str) -> list[str]:
    px = pt_to_px(part.row_label_font().pointSizeF())
    k = part.row_label_stride()
    if px < min_px - 0.05 or k > 1:
        return [f"{what}: {title} names its {rows} rows in {px:.1f} px" + (f" (every {k}th)" if k > 1 else "")]
    return []


def stage_text_problems(stage, min_px: float, what: str) -> list[str]:
    """The live lesson's own lines (title, caption, footer, the typing line): at least ``min_px``, and none cut
    (a wrapped label needing more height than it has)."""
    out = []
    for name in ("title", "caption", "footer", "input"):
        w = getattr(stage, name, None)
        if w is None or not w.isVisibleTo(stage):
            continue
        px = pt_to_px(w.font().pointSizeF())
        if px < min_px - 0.05:
            out.append(f"{what}: the lesson's {name} is {px:.1f} px")
        text = w.text() if hasattr(w, "text") else ""
        if hasattr(w, "cursorPosition") and w.cursorPosition() > 0 and \
                w.fontMetrics().horizontalAdvance(text) > w.width() - 12:
            out.append(f"{what}: the lesson's typing line shows the end of {text[:30]!r}…, not its start")
        if text and hasattr(w, "wordWrap") and w.wordWrap() and w.heightForWidth(w.width()) > w.height() + 1:
            out.append(f"{what}: the lesson's {name} is cut ({w.heightForWidth(w.width())} px of text in "
                       f"{w.height()} px)")
    return out


def bar_overflow_problems(view, what: str) -> list[str]:
    """Every drawn colour bar of a figure's maps inside its map's box and the canvas: a bar wider than its map
    drew its label over the next map's row labels, the last one's past the figure's edge (word order)."""
    from attnviz.gui.widgets.colour_bar import ColourBarItem

    canvas = getattr(view, "canvas", None)
    if canvas is None:
        return []
    out = []
    for bar in [it for it in canvas.scene().items() if isinstance(it, ColourBarItem)]:
        if not (bar.isVisible() and bar.style.colour_bar and bar.label):
            continue
        box, owner = bar.sceneBoundingRect(), bar.parentItem()
        while owner is not None and not hasattr(owner, "bar"):
            owner = owner.parentItem()
        right = min(owner.sceneBoundingRect().right() if owner is not None else canvas.width(), canvas.width())
        if box.right() > right + 1:
            out.append(f"{what}: colour bar {bar.label!r} runs {box.right() - right:.0f} px past its map")
    return out


def axis_title_overlaps(view, what: str) -> list[str]:
    """Axis titles of a figure's plots drawn over each other: a rotated title longer than its short plot runs
    into the row above or below ("attention entropy (nats)" over the next row's at 1280×720)."""
    import pyqtgraph as pg

    canvas = getattr(view, "canvas", None)
    if canvas is None:
        return []
    boxes = []
    for ax in [it for it in canvas.scene().items() if isinstance(it, pg.AxisItem) and it.isVisible()]:
        label = getattr(ax, "label", None)
        if label is not None and label.isVisible() and label.toPlainText().strip():
            boxes.append((label.toPlainText().strip(), label.sceneBoundingRect()))
    return _overlaps(boxes, f"{what}: axis titles")


def scroll_problems(widget, what: str) -> list[str]:
    """A presented page (a lesson's scene) that scrolls: part of it is off screen until someone scrolls (the patch
    filters' note under their tiles at 1280×720 and 1920×1080)."""
    from PySide6.QtWidgets import QScrollArea

    out = []
    for area in widget.findChildren(QScrollArea):
        if not area.isVisible():
            continue
        for name, bar in (("down", area.verticalScrollBar()), ("across", area.horizontalScrollBar())):
            if bar.maximum() > 0:
                out.append(f"{what}: the figure scrolls {name} ({bar.maximum()} px off screen)")
    return out


def cut_row_label_problems(view, what: str) -> list[str]:
    """Row labels drawn past their axis' top or bottom, where the axis cuts them and the title above covers them
    (the first row of a 128-row map, "0 I", half under its title). Read from the label strip each row axis last
    drew (its image and where it went), for axes showing all their rows (a zoomed map's strip holds rows
    outside the view on purpose)."""
    from attnviz.gui.widgets.token_axis import TokenAxisItem

    canvas = getattr(view, "canvas", None)
    if canvas is None:
        return []
    out = []
    for ax in [it for it in canvas.scene().items() if isinstance(it, TokenAxisItem)]:
        strip = getattr(ax, "_strip", None)
        if ax.orientation != "left" or not ax.isVisible() or strip is None or ax.view is None or not ax.labels:
            continue
        (_, _), (y0, y1) = ax.view.viewRange()
        if y0 > 0.01 or y1 < len(ax.labels) - 0.01:
            continue  # zoomed: rows outside the view are drawn into the strip on purpose
        image, y = strip[4], strip[6]
        top, bottom = y, y + image.height() / image.devicePixelRatio()
        height = ax.boundingRect().height()
        # the label images carry a pixel of antialiasing margin: more than 2 px out is a cut glyph
        if top < -2 or bottom > height + 2:
            out.append(f"{what}: row labels run {max(-top, bottom - height):.0f} px past their axis (cut, under "
                       "the title or the next row)")
    return out


def painted_text_problems(widget, min_px: float, what: str) -> list[str]:
    """Text a figure's widgets paint themselves (the walkthrough grids' titles, shapes, labels, numbers and
    colour-bar ticks; drawn with QPainter.drawText from Python) and the texts of its QLabels (operators such as
    "× 0.25 ="), each at least ``min_px``: recorded while ``widget`` is drawn once off screen."""
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QLabel

    seen = []
    original = QPainter.drawText

    def recorded(painter, *args):
        font = painter.font()
        px = font.pixelSize() if font.pixelSize() > 0 else pt_to_px(font.pointSizeF())
        text = next((a for a in args if isinstance(a, str)), "")
        if text.strip():
            seen.append((px, text))
        return original(painter, *args)

    QPainter.drawText = recorded  # Python-side calls (the grids paint from Python) look the method up here
    try:
        widget.grab()
    finally:
        QPainter.drawText = original
    for label in widget.findChildren(QLabel):
        if label.isVisibleTo(widget) and label.text().strip():
            font = label.font()
            seen.append((font.pixelSize() if font.pixelSize() > 0 else pt_to_px(font.pointSizeF()), label.text()))
    small = sorted({(round(px, 1), text[:24]) for px, text in seen if px < min_px - 0.05})
    return [f"{what}: {text!r} painted at {px} px" for px, text in small[:6]]


def cut_title_problems(view, what: str) -> list[str]:
    """Titles and notes of a figure's canvas drawn past its bottom or top edge, their last lines cut (the word-
    order notes lost three lines at 1920×1080 under tall colour bars)."""
    canvas = getattr(view, "canvas", None)
    if canvas is None:
        return []
    out = []
    for t in _title_items(canvas.scene()):
        box = canvas.mapFromScene(t.item.sceneBoundingRect()).boundingRect()
        if box.bottom() > canvas.height() + 2 or box.top() < -2:
            text = re.sub(r"<[^>]+>", " ", t.text)[:40]
            out.append(f"{what}: {text!r} is cut at the figure's edge ({box.top()}–{box.bottom()} of {canvas.height()})")
    return out
