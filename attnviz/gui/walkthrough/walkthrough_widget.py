"""Self-attention step by step, with the numbers the loaded model actually computed.

One query token of one head of one layer: project → score → scale → (mask) → softmax → weight → sum.
Back/forward buttons and a slider move through the steps; clicking a token makes it the query (through
the shared Selection, so every view follows). The numbers come from
:func:`attnviz.analysis.steps.compute_six_steps`, the same function behind ``attnviz steps --json``.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QSpinBox

from attnviz.analysis.model_labels import x_words
from attnviz.analysis.walkthrough_default import default_query, page_model
from attnviz.capture.trace import layer_prefix
from attnviz.errors import AttnvizError
from attnviz.gui.style import ViewStyle
from attnviz.gui.walkthrough.gqa_diagram import GqaDiagram
from attnviz.gui.walkthrough.step_panels import step_label, build_step, step_names
from attnviz.gui.walkthrough.query_picker import TokenStrip
from attnviz.gui.walkthrough.query_row import QueryRow
from attnviz.gui.walkthrough.walkthrough_view import WalkthroughView
from attnviz.selection import Selection

__all__ = ["WalkthroughWidget", "STRIP_TOKENS"]

STRIP_TOKENS = 40  # tokens in the query strip of a long input, around the query (its few lines show the query)


class WalkthroughWidget(WalkthroughView):
    """The six steps for the selected layer, head and query token of a Trace."""

    title = "Walkthrough"

    def __init__(self, selection: Selection | None = None, style: ViewStyle | None = None, parent=None):
        super().__init__(selection, style, parent)

    # -- widgets ---------------------------------------------------------------------------------
    def _build(self) -> None:
        self.steps = None  # the SixSteps on screen
        self.step_list: list[str] = step_names(False)
        self.message = ""
        self.layer_box, self.head_box = QSpinBox(), QSpinBox()
        self.layer_box.setPrefix("layer ")
        self.head_box.setPrefix("head ")
        self.part_box = QComboBox()
        # as wide as its longest item whenever items change: sized once for "self-attention" (shown before the
        # trace came), translate's "cross-attention" read "cross-attentio" at 1920×1080 and 1280×720
        self.part_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.part_box.addItem("self-attention", "self")
        self.back_button, self.next_button = QPushButton("◀ Back"), QPushButton("Next ▶")
        self.back_button.setShortcut("Alt+Left")
        self.next_button.setShortcut("Alt+Right")
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setPageStep(1)
        self.slider.setTickPosition(QSlider.TicksBelow)
        self.step_label = QLabel()
        # as wide as the longest step's name: the row keeps its place from step to step and never cuts one
        longest = max((step_label(n) for n in step_names(True, True)), key=self.step_label.fontMetrics().horizontalAdvance)
        self.step_label.setMinimumWidth(self.step_label.fontMetrics().horizontalAdvance(longest) + 8)
        controls = QHBoxLayout()
        for w in (self.layer_box, self.head_box, self.part_box, self.back_button):
            controls.addWidget(w)
        controls.addWidget(self.slider, 1)
        controls.addWidget(self.next_button)
        controls.addWidget(self.step_label)
        self.layer_box.valueChanged.connect(lambda v: self._select(layer=v))
        self.head_box.valueChanged.connect(lambda v: self._select(head=v))
        self.part_box.currentIndexChanged.connect(lambda _i: self._select(part=self.part_box.currentData()))
        self.back_button.clicked.connect(lambda: self.set_step(self.slider.value() - 1))
        self.next_button.clicked.connect(lambda: self.set_step(self.slider.value() + 1))
        self.slider.valueChanged.connect(lambda _v: self._refresh_board())

        self.tokens = TokenStrip(self.style)
        self.tokens.clicked.connect(lambda i: self._select(query=i))
        self.gqa = GqaDiagram(self.style)
        self.query_row = QueryRow(self.tokens, self.gqa)
        self._lay_out(controls, top=self.query_row)
        self._sync_controls()

    # -- the view contract -------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        trace = self.trace
        # the steps on screen were computed from the previous trace: dropped now, even while hidden (the update
        # below waits until the tab is shown, and a restyle meanwhile redrew them against the new trace: F5
        # after a model switch raised on a None trace)
        self.steps, self.message = None, ""
        self.part_box.blockSignals(True)
        self.part_box.clear()
        self.part_box.addItem("self-attention", "self")
        if trace is not None and trace.has_cross:
            self.part_box.addItem("cross-attention", "cross")
        if trace is not None and trace.n_enc_layers:
            self.part_box.addItem("encoder", "enc")
        self.part_box.setVisible(self.part_box.count() > 1)
        self.part_box.blockSignals(False)
        self._update()

    def _style_changed(self) -> None:
        for w in (self.tokens, self.gqa):
            w.set_style(self.style)
        if self._stale:  # hidden and behind the trace or selection: showing it updates and draws in the new style
            return
        self._refresh_board()

    def set_step(self, index: int) -> None:
        """Go to step ``index`` (0-based, clamped)."""
        self.slider.setValue(max(0, min(index, len(self.step_list) - 1)))

    @property
    def step_name(self) -> str:
        return self.step_list[self.slider.value()]

    # -- state ------------------------------------------------------------------------------------
    def _select(self, **changes) -> None:
        if self.selection is not None and not getattr(self, "_syncing", False):
            self.selection.update(**changes)
            if self.trace is not None and changes.keys() & {"layer", "head", "part"}:
                # the user's own head: the walkthrough opens here from now on (clicks elsewhere never move it)
                self.selection.choose_on_page("walkthrough", page_model(self.trace))

    def _resolved(self) -> tuple[str, int, int, int] | None:
        """(part, layer, head, query) valid for the trace; the selection is never rewritten here."""
        t = self.trace
        if t is None:
            return None
        s = self.selection.state
        part = s.part if s.part in ("self", "cross", "enc") else "self"
        if (part == "cross" and not t.has_cross) or (part == "enc" and not t.n_enc_layers):
            part = "self"
        n_layers = t.layers_in(part)
        n_q = t[layer_prefix(0, part) + "x"].shape[0]
        # no query chosen: the rule's row ([CLS] for an image classifier, never a decoder row that wrote nothing)
        query = s.query if s.query is not None and 0 <= s.query < n_q else default_query(t, part)
        return part, min(s.layer, n_layers - 1), min(s.head, t.n_heads - 1), query

    def _update(self) -> None:
        from attnviz.analysis.steps import compute_six_steps
        from attnviz.analysis.steps_window import key_window

        # where the walkthrough opens is the window's to say (pages.tab_changed → open_walkthrough, the one
        # rule): a widget shows its selection as given (a lesson's scene, an export, a test), only a missing
        # query takes the rule's row
        if self._skip_while_hidden():
            return
        where = self._resolved()
        self.steps, self.message = None, ""
        if where is not None:
            part, layer, head, query = where
            try:
                # a long input: the grids show keys around the query (computed over all of them first)
                self.steps = key_window(compute_six_steps(self.trace, layer, head, query, part=part))
            except (AttnvizError, KeyError) as exc:  # a trace without the arrays this needs
                self.message = f"cannot show the steps: {exc}"
        has_mask = self.steps is not None and bool(np.isneginf(self.steps.mask).any() or self.trace.description.causal
                                                   or getattr(self.steps, "bias", None) is not None)
        rotary = self.steps is not None and getattr(self.steps, "rope_cos_i", None) is not None
        current = self.step_name if self.step_list else "project"
        self.step_list = step_names(has_mask, rotary)
        self._sync_controls()
        index = self.step_list.index(current) if current in self.step_list else min(self.slider.value(),
                                                                                    len(self.step_list) - 1)
        self.slider.blockSignals(True)
        self.slider.setValue(index)
        self.slider.blockSignals(False)
        self._refresh_board()

    def _sync_controls(self) -> None:
        self._syncing = True
        try:
            t, where = self.trace, self._resolved()
            self.slider.setRange(0, len(self.step_list) - 1)
            if t is not None and where is not None:
                part, layer, head, query = where
                self.layer_box.setRange(0, (t.layers_in(part)) - 1)
                self.head_box.setRange(0, t.n_heads - 1)
                self.layer_box.setValue(layer)
                self.head_box.setValue(head)
                self.part_box.setCurrentIndex(max(0, self.part_box.findData(part)))
                from attnviz.analysis.decoder_positions import row_labels  # "→ token produced" on cross rows

                from attnviz.analysis.steps_window import position_window

                labels = row_labels(t, part)
                # a long input: tokens around the query, the query among the first (the strip shows a few lines)
                a, b = position_window(len(labels), query + STRIP_TOKENS // 2 - 8, STRIP_TOKENS)
                self.tokens.set_tokens(labels[a:b], query, offset=a, total=len(labels))
                self.gqa.setVisible(t.n_kv_heads < t.n_heads)
                self.gqa.set_heads(t.n_heads, t.n_kv_heads, head)
                self.query_row.arrange()
            else:
                self.tokens.set_tokens([], None)
                self.gqa.setVisible(False)
            for w in (self.layer_box, self.head_box, self.back_button, self.next_button, self.slider):
                w.setEnabled(t is not None)
        finally:
            self._syncing = False

    def _refresh_board(self) -> None:
        i = self.slider.value()
        self.back_button.setEnabled(self.trace is not None and i > 0)
        self.next_button.setEnabled(self.trace is not None and i < len(self.step_list) - 1)
        self.step_label.setText(step_label(self.step_list[i]))
        if self.steps is None:
            self.board.clear()
            self.grids = {}
            self.board.add_heading("Self-attention step by step",
                                   self.message or (self.empty_text if self.empty_reason
                                                     else "load a model and run an input to see its numbers"))
            self.board.finish()
            return
        key = self.selection.state.key if self.selection is not None else None
        s = self.steps
        if key is not None:  # a position of the input; the grids' rows are the window's keys
            key = key - s.key_offset if 0 <= key - s.key_offset < len(s.key_tokens) else None
        gqa = f" (reads key/value head {s.kv_head})" if self.trace.n_kv_heads < self.trace.n_heads else ""
        where = f"layer {s.layer} · head {s.head}{gqa}" + (f" · {s.part} attention" if s.part != "self" else "")
        origin = self.selection.detour_origin if self.selection is not None else None
        if origin is not None and (origin.layer, origin.head) != (s.layer, s.head):  # said where it is read: the walkthrough opened elsewhere than the other tabs
            where += f" (where this row mixes; the Attention tab keeps layer {origin.layer} · head {origin.head})"
        self.grids = build_step(self.board, s, self.step_name, key=key, context=where, x_is=x_words(self.trace.description))
        for g in self.grids.values():
            self._adopt(g)
            g.clicked.connect(self._grid_clicked)

    def _grid_clicked(self, r: int, c: int) -> None:
        grid = self.sender()
        # rows of K, V, scores… are keys: clicking one picks the key the worked example is written for
        keyed = grid is not None and grid.values.shape[0] == len(self.steps.key_tokens)
        if keyed and grid.name not in ("W_Q", "W_K", "W_V"):
            self._select(key=r + self.steps.key_offset)  # a long input's grids start at the window's first key
