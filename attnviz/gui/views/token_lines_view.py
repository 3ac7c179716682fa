"""TokenLinesView: BertViz's head view — query tokens left, key tokens right, lines weighted by attention.

Every line of every shown head is drawn at once (all heads by default), each head in its own
colour-blind-safe colour with opacity = weight; the strongest lines of all heads are drawn last, and
each head's lines leave and reach a token at their own small offset, so heads stay apart instead of
blending into grey. Hovering a token (or selecting it as the query) focuses it: its lines at full
strength, all others faded. Clicking a left token selects it as the query (click again to clear).
Crowded columns get a smaller font before labels are thinned; patch inputs label the first patch of
each grid row and mark the rows. Cross-attention shows decoder tokens left and encoder tokens right.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QCheckBox, QGridLayout, QMenu, QToolButton, QWidget, QWidgetAction

from attnviz.analysis.decoder_positions import end_row
from attnviz.analysis.trace_parts import format_value, resolve
from attnviz.gui.style import head_colour
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.token_lines_item import FADE, MAX_LINES, MAX_TOKENS, MIN_WEIGHT, TokenLinesItem
from attnviz.gui.widgets.title import make_title, set_title

# the drawing and its limits live in token_lines_item; they are named here too for callers of the view
__all__ = ["TokenLinesView", "TokenLinesItem", "MAX_TOKENS", "MIN_WEIGHT", "FADE", "MAX_LINES", "INLINE_HEADS"]

# heads whose check boxes sit in the controls row; more go in the "heads" button's pop-up grid: a 32-head model's
# 32 boxes in one row made the window 2,000 px wide, past a 1280×720 screen, the figure off its right edge
INLINE_HEADS = 12
POPUP_COLUMNS = 8


class TokenLinesView(BaseView):
    """BertViz-style head view of the selected layer: every head at first; check boxes toggle heads."""

    title = "Token lines"

    def _build(self) -> None:
        self.title_item = make_title()
        self.lines = TokenLinesItem(self.style)
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.lines, row=1, col=0)
        self.lines.on_hover = self._hover
        self.lines.on_click = self._click
        self.head_boxes: list[QCheckBox] = []
        self.heads_button = QToolButton()
        self.heads_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.heads_button.setToolTip("choose the heads whose lines are drawn")
        # the pop-up's arrow beside the words, not over their last digits ("heads: all 1▾")
        self.heads_button.setStyleSheet("QToolButton { padding-right: 14px; }"
                                        "QToolButton::menu-indicator { subcontrol-position: right center; }")
        self.heads_button.hide()
        self.controls.addWidget(self.heads_button)
        self.all_button = QToolButton(text="All heads")
        self.all_button.clicked.connect(lambda: self.set_heads(range(len(self.head_boxes))))
        self.controls.addWidget(self.all_button)
        self.controls.addStretch(1)
        self.res = None
        self._cut = ""
        self._shown_window, self._key0 = (0, 0), 0  # query positions drawn [a, b) and the first key drawn
        self._title, self._title_style = "", None

    # -- heads ---------------------------------------------------------------------------------
    @property
    def shown_heads(self) -> list[int]:
        return [h for h, b in enumerate(self.head_boxes) if b.isChecked()]

    def set_heads(self, heads) -> None:
        """Show exactly these heads."""
        heads = set(heads)
        for h, box in enumerate(self.head_boxes):
            box.blockSignals(True)
            box.setChecked(h in heads)
            box.blockSignals(False)
        self._redraw()

    def _make_head_boxes(self, n: int) -> None:
        if len(self.head_boxes) == n:
            return
        for box in self.head_boxes:
            self.controls.removeWidget(box)
            box.deleteLater()
        self.head_boxes = []
        popup = n > INLINE_HEADS
        grid = QGridLayout(panel := QWidget()) if popup else None
        for h in range(n):
            pm = QPixmap(12, 12)
            pm.fill(QColor(head_colour(h)))
            box = QCheckBox(f"H{h}")
            box.setIcon(QIcon(pm))
            box.toggled.connect(self._redraw)
            if popup:
                grid.addWidget(box, h // POPUP_COLUMNS, h % POPUP_COLUMNS)
            else:
                self.controls.insertWidget(h, box)
                box.show()  # added after the view was shown: Qt would show it only on the next event pass
            self.head_boxes.append(box)
        old = self.heads_button.menu()
        if popup:  # the boxes in a menu's widget: it stays open while heads are ticked
            menu = QMenu(self.heads_button)
            action = QWidgetAction(menu)
            action.setDefaultWidget(panel)
            menu.addAction(action)
            self.heads_button.setMenu(menu)
        else:
            self.heads_button.setMenu(None)
        if old is not None:
            old.deleteLater()
        self.heads_button.setVisible(popup)

    # -- data flow -----------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        if self.trace is None:
            self.lines.set_data([], [], None)
            set_title(self.title_item, self.empty_text, self.style)
            return
        self._make_head_boxes(self.trace.n_heads)
        self.res = resolve(self.trace, self.state)
        if not self.shown_heads:
            self.set_heads(range(self.trace.n_heads))  # BertViz's start: all heads at once
        self._load()

    def _selection_changed(self, state, changed) -> None:
        if self.trace is None:
            return
        old = self.res
        self.res = resolve(self.trace, state)
        if old is not None and self.res.head != old.head and self.shown_heads == [old.head]:
            self.set_heads([self.res.head])  # one head shown: follow the selection
        if changed & {"layer", "part"} or self._window(self.res) != self._shown_window:
            self._load()
        self.lines.selected = self._local(self.res.query)
        self._redraw()

    def _window(self, r) -> tuple[int, int]:
        """First and last+1 query position drawn: all of a short input; of a long one, MAX_TOKENS positions
        around the selected query (its keys too, for self-attention), asked of the trace as one block."""
        _, tq, _ = self.trace.probs_shape(r.layer, r.part)
        if tq <= MAX_TOKENS:
            return 0, tq
        centre = r.query if r.query is not None else 0
        a = min(max(centre - MAX_TOKENS // 2, 0), tq - MAX_TOKENS)
        return a, a + MAX_TOKENS

    def _local(self, query):
        """A query position as an index of the drawn window (None when outside it)."""
        a, b = self._shown_window
        return query - a if query is not None and a <= query < b else None

    def _load(self) -> None:
        r = self.res
        _, tq, tk = self.trace.probs_shape(r.layer, r.part)
        self._shown_window = a, b = self._window(r)
        k0 = a if r.part == "self" and tk == tq else 0  # cross-attention: the source from its start
        k1 = min(tk, k0 + MAX_TOKENS)
        weights = self.trace.probs(r.layer, r.part, rows=slice(a, b), cols=slice(k0, k1))  # (H, ≤200, ≤200)
        self._key0 = k0
        grid = self.trace.grid if r.part == "self" and (a, b) == (0, tq) else None
        dimmed = end_row(self.trace, r.part)
        self.lines.set_data(r.query_tokens[a:b], r.key_tokens[k0:k1], weights, grid,
                            dimmed=None if dimmed is None or not a <= dimmed < b else dimmed - a)
        picture = None
        if grid is not None and "image" in self.trace:
            img = np.asarray(self.trace["image"], dtype=np.float32)  # (S, S, C) in [0, 1]
            img = np.repeat(img, 3, axis=2) if img.shape[2] == 1 else img[..., :3]
            picture = (np.clip(img, 0, 1) * 255).round().astype(np.uint8)
        self.lines.set_picture(picture)
        self.lines.selected = self._local(r.query)
        if (a, b) == (0, tq) and k1 - k0 == tk:
            cut = ""
        elif r.part == "self" and k0 == a:  # a long input: the window, and that weights to keys outside it are not drawn
            cut = f" · positions {a}–{b - 1} of {tq:,} around the query (keys outside not drawn)"
        else:
            cut = f" · queries {a}–{b - 1} of {tq:,}, keys {k0}–{k1 - 1} of {tk:,}"
        self._cut = cut
        self._redraw()

    def _redraw(self, *args) -> None:
        self.lines.heads = self.shown_heads
        if self.heads_button.isVisibleTo(self):
            n, shown = len(self.head_boxes), len(self.lines.heads)
            self.heads_button.setText(f"heads: {'all ' + str(n) if shown == n else f'{shown} of {n}'}")
        self.lines.update()
        if self.res is not None:
            heads = ", ".join(str(h) for h in self.lines.heads) or "none"
            # one head is "head 0" ("heads 0" read as a count of none)
            which = ("all heads" if len(self.lines.heads) == len(self.head_boxes) > 1
                     else f"head {heads}" if len(self.lines.heads) == 1 else f"heads {heads}")
            cut = self.lines.drawn_lines()[1] if self.lines.weights is not None else 0.0
            omitted = f" · lines fainter than {cut:.3f} left out" if cut > 0 else ""
            title = (f"Layer {self.res.layer} · {which} · {self.res.part_name}"
                     f" · line opacity = attention weight{self._cut}{omitted}")
            if title != self._title or self.style is not self._title_style:  # a new title re-lays out the figure
                set_title(self.title_item, title, self.style)
                self._title, self._title_style = title, self.style

    def _style_changed(self) -> None:
        self.lines.style = self.style
        self._redraw()

    # -- interaction ---------------------------------------------------------------------------
    def token_text(self, side: str, index: int) -> str:
        """Status text for a hovered token: its strongest links in the shown heads."""
        tokens = self.lines.left if side == "left" else self.lines.right
        parts = []
        for h in self.lines.heads:
            w = self.lines.weights[h]
            row = w[index] if side == "left" else w[:, index]
            j = int(np.argmax(row))
            other = (self.lines.right if side == "left" else self.lines.left)[j]
            offset = self._key0 if side == "left" else self._shown_window[0]  # positions in the whole input
            parts.append(f"H{h}: {other} [{j + offset}] {format_value(row[j])}")
        arrow = "→ strongest key" if side == "left" else "← strongest query"
        here = index + (self._shown_window[0] if side == "left" else self._key0)
        return f"{tokens[index]} [{here}] {arrow}: " + "; ".join(parts)

    def _hover(self, hit) -> None:
        self.set_hover_text("" if hit is None or not self.lines.heads else self.token_text(*hit))
        self._redraw()  # the title states which faint lines are left out, and that depends on the focus

    def _click(self, side: str, index: int) -> None:
        if self.selection is None:
            return
        index += self._shown_window[0] if side == "left" else self._key0  # a window's index → the input's
        if side == "left":
            self.selection.update(query=None if self.selection.query == index else index)
        else:
            self.selection.update(key=None if self.selection.key == index else index)
