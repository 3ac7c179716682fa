"""What fills the widgets of the "Heads over a data set" view: the sortable score table, the list of the
inputs where a head scores highest (with thumbnails of images), the values written in the grid's cells and
the selected head's mean pattern.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QTableWidget, QTableWidgetItem

from attnviz.analysis.head_scores import SCORES
from attnviz.gui.views.dataset_links import describe_item
from attnviz.gui.views.heatmap_data import quantize

__all__ = ["NumberItem", "thumbnail", "fill_score_table", "fill_top_inputs", "CellLabels", "show_maps",
           "draw_mean_pattern"]


def thumbnail(image: np.ndarray):
    """A 48-pixel icon of an image array (nearest neighbour: the pixels the model saw)."""
    from PySide6.QtGui import QIcon, QPixmap

    from attnviz.gui.image_arrays import array_to_qimage

    pix = QPixmap.fromImage(array_to_qimage(image))
    return QIcon(pix.scaled(48, 48, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation))


class NumberItem(QTableWidgetItem):
    """A table cell that sorts by its number (undefined scores last)."""

    def __init__(self, value: float | None, text: str):
        super().__init__(text)
        self.value = -np.inf if value is None or not np.isfinite(value) else float(value)
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other):
        return self.value < getattr(other, "value", -np.inf)


def fill_score_table(table: QTableWidget, result) -> None:
    """One row per head (part, layer, head, every score), sortable by number; "–" where undefined."""
    table.setSortingEnabled(False)
    rows = result.to_json()["heads"]
    table.setRowCount(len(rows))
    for r, h in enumerate(rows):
        # the part as the grid's title names it: "decoder self" beside an "encoder self-attention" grid
        two_stacks = "enc" in result.parts or "cross" in result.parts
        table.setItem(r, 0, QTableWidgetItem(PART_NAMES.get((h["part"], two_stacks), h["part"])))
        table.setItem(r, 1, NumberItem(h["layer"], str(h["layer"])))
        table.setItem(r, 2, NumberItem(h["head"], str(h["head"])))
        for i, name in enumerate(SCORES):
            v = h["scores"][name]
            table.setItem(r, 3 + i, NumberItem(v, "–" if v is None else f"{v:.3f}"))
    table.setSortingEnabled(True)
    table.resizeColumnsToContents()


# scores that are shares of attention (0–1): drawn on a fixed 0–1 scale
SHARE_SCORES = frozenset({"previous_token", "duplicate_token", "induction", "first_token", "gradient_share"})
PART_TITLES = {"self": "self-attention", "enc": "encoder self-attention", "cross": "cross-attention"}
# the table's part column: (part, the model has an encoder and a decoder) -> name
PART_NAMES = {("self", True): "decoder self", ("enc", True): "encoder self", ("cross", True): "cross"}


def fill_top_inputs(top_list: QListWidget, result, part: str, score: str, layer: int, head: int) -> None:
    """The inputs where head (``layer``, ``head``) scores highest on ``score``, best first; each item keeps
    its input's index (``Qt.UserRole``) for opening it in every view."""
    top_list.clear()
    top = result.top[part].get(score)
    vals = result.top_values[part].get(score)
    if top is None:
        return
    seen = set()
    for idx, v in zip(top[layer, head], vals[layer, head]):
        if idx < 0 or idx not in result.inputs:
            continue
        shown = result.inputs[int(idx)]
        text = describe_item(shown)
        if isinstance(shown, str):
            if text in seen:  # a data set repeats short sentences: list each once, at its best score
                continue
            seen.add(text)
        item = QListWidgetItem(f"{v:.3f}   {text}")
        item.setData(Qt.ItemDataRole.UserRole, int(idx))
        if isinstance(shown, np.ndarray):  # a generated image: show it, its size says little
            item.setIcon(thumbnail(shown))
        top_list.addItem(item)


class CellLabels:
    """Each head's value written in its cell of the grid's ViewBox ``vb`` (at most ``limit`` heads), in the
    largest font whose "0.00" fits a cell on screen, re-fitted whenever the cells change size."""

    def __init__(self, vb, limit: int):
        self.vb, self.limit = vb, limit
        self.items: list = []
        self.style = None
        vb.sigResized.connect(self.fit)
        vb.sigRangeChanged.connect(self.fit)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def clear(self) -> None:
        for item in self.items:
            self.vb.removeItem(item)
        self.items = []

    def set(self, values: np.ndarray, lo: float, hi: float, style, window: tuple[range, range] | None = None) -> None:
        """Write ``values`` (layers × heads) on a colour scale from ``lo`` to ``hi``: all of them, at most ``limit``
        heads, or the page ``window`` (layers, heads) on screen of a larger grid."""
        import pyqtgraph as pg

        self.clear()
        self.style = style
        L, H = values.shape
        if window is None and L * H > self.limit:
            return
        layers, heads = window or (range(L), range(H))
        for layer in layers:
            for head in heads:
                v = values[layer, head]
                if not np.isfinite(v):
                    continue
                # dark text on the light end of the colour map, light text on the dark end
                light = (v - lo) / (hi - lo) > 0.6
                item = pg.TextItem(f"{v:.2f}", color="#000000" if light else "#ffffff", anchor=(0.5, 0.5))
                item.setFont(style.font(1.0))
                item.setPos(head + 0.5, layer + 0.5)
                self.vb.addItem(item, ignoreBounds=True)
                self.items.append(item)
        self.fit()

    def fit(self, *_args) -> float | None:
        """Give the labels the largest font of :data:`CELL_FONT_FACTORS` that fits inside one cell, or hide
        them when none does (a number wider than its cell overlaps its neighbours and is clipped at the
        edges; hovering a cell still gives its value). Returns the font factor used, or None when hidden."""
        if not self.items:
            return None
        (x0, x1), (y0, y1) = self.vb.viewRange()
        w_px, h_px = self.vb.width(), self.vb.height()
        if x1 <= x0 or y1 <= y0 or w_px <= 0 or h_px <= 0:
            return None
        cell_w, cell_h = w_px / (x1 - x0), h_px / (y1 - y0)  # one cell is one data unit
        chosen = next((f for f in CELL_FONT_FACTORS
                       if self.style.metrics(f).horizontalAdvance("0.00") + 4 <= cell_w
                       and self.style.metrics(f).height() <= cell_h), None)
        for item in self.items:
            item.setVisible(chosen is not None)
            if chosen is not None and item.textItem.font().pointSizeF() != self.style.font_pt(chosen):
                item.setFont(self.style.font(chosen))
        return chosen


# cell text sizes tried, largest first: below the base font (12 px docked) a number is not read from the back
# row (0.8 drew 9.6 px), so the labels are hidden instead and hovering a cell gives its value
CELL_FONT_FACTORS = (1.0,)


def show_maps(heatmaps, on: bool) -> None:
    """Maps, axes and colour bars only with scores to show: an empty map on a 0–1 bar reads as all zeros."""
    for heatmap in heatmaps:
        for item in (heatmap.image, heatmap.bar, heatmap.left, heatmap.bottom):
            item.setVisible(on)


def draw_mean_pattern(pattern, mean: np.ndarray, layer: int, head: int) -> None:
    """The mean attention pattern of one head (query × key position) on its own 0…max scale."""
    missing = ~np.isfinite(mean)
    vmax = float(np.nanmax(mean)) if np.isfinite(mean).any() else 1.0
    vmax = vmax if vmax > 0 else 1.0
    pattern.set_image(quantize(np.nan_to_num(mean), vmax, missing), mean.shape)
    pattern.set_labels([str(i) for i in range(mean.shape[0])], [str(j) for j in range(mean.shape[1])])
    # positions are numbers: where all of them would shrink (24 columns in a half-window dock collided),
    # every 5th is drawn at full size, as on a numeric axis
    for axis, n in ((pattern.left, mean.shape[0]), (pattern.bottom, mean.shape[1])):
        axis.set_major(range(0, n, 5))
    pattern.set_mask(missing)
    pattern.set_levels(0.0, vmax, "mean weight · own maximum")  # short: the bar is only as tall as the map
    pattern.set_title(f"Mean attention · layer {layer}, head {head}<br>rows: query position · columns: key position")
