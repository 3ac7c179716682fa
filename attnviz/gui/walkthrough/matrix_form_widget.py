"""Self-attention of a whole layer as matrices: Q = XW_Q + b_Q … Z = PV, the heads × W_O, then the block.

One part at a time, so every matrix is large enough for a slide (a lecturer shows one part of the layer
at a time): the selected head from X to its attention weights P; from P to Z and the attention output;
all heads' Z concatenated × W_O; the residual stream and the MLP; or an overview of all of it. In
presentation mode Page Down / Page Up step through these parts. Every symbol means one thing:

* ``X``: the rows the Q/K/V projections read — LN(R) in a pre-LN model, R itself in a post-LN one;
* ``E``: the encoder's output, which cross-attention keys and values are made from;
* ``R``: the residual stream entering the block; ``A`` the attention output; ``R_mid`` the stream after
  the attention sub-layer (``L{i}.h``) and ``R_out`` after the block (``L{i}.resid``, the next R).

Biases appear in a formula only when the model has them (its config, or a nonzero b). The matrices come from
:func:`attnviz.analysis.steps.compute_matrix_form`; long inputs are computed off the GUI thread.
"""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from attnviz.analysis.model_labels import norm_label
from attnviz.analysis.steps_window import position_window
from attnviz.capture.trace import layer_prefix
from attnviz.errors import AttnvizError
from attnviz.gui.walkthrough.gqa_diagram import GqaDiagram
from attnviz.gui.walkthrough.matrix_form_rows import PRESENTED_SIDE, SQUARE_SIDE, MatrixFormRows, _Context
from attnviz.gui.walkthrough.rich_controls import FormulaComboBox
from attnviz.gui.walkthrough.walkthrough_view import WalkthroughView
from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, HELD_FLOOR

__all__ = ["MatrixFormWidget", "SYNC_LIMIT", "SECTIONS", "SQUARE_SIDE", "PRESENTED_SIDE", "WINDOW_ABOVE",
           "WINDOW_TOKENS", "NAMED_ROWS"]

SYNC_LIMIT = 128  # above this many tokens the matrices are computed off the GUI thread
# a longer input shows WINDOW_TOKENS positions around the selected query (its T×T maps could not be shown
# or held: 16,384 tokens are 2 GB a map in float64); the heading says which
WINDOW_ABOVE = 256
WINDOW_TOKENS = 128
# one head's part (its T×T maps, a row per token): every row named up to this many tokens; a longer input shows
# this many positions around the selected query (at 48 tokens a 1920×1080 dock named every 7th row and drew
# the maps ~96 px), the note says which
NAMED_ROWS = 24
# the windows an export's smaller page tries, largest first, when it cannot name NAMED_ROWS rows of both bands
PAGE_ROWS = (20, 16, 14, 12, 10, 8)
SECTIONS = {  # name → what the chooser says
    "head": "one head: X → Q, K, V → P",
    "output": "one head: Z = P V → A",
    "heads": "all heads: concat(Z) W_O",
    "block": "the block: residual stream + MLP",
    "all": "overview: everything at once (small)",
}


class MatrixFormWidget(MatrixFormRows, WalkthroughView):
    """The selected layer in matrix form; the selected head is drawn in detail."""

    title = "Matrix form"

    def _build(self) -> None:
        self.form = None  # the MatrixForm on screen
        self._form_key = None
        self._pending = None
        self.gqa = None  # made with each drawing (_draw)
        self.section_box = FormulaComboBox()  # "concat(Z) W_O" with a real subscript, as the figure writes it
        self.section_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # its longest part whole
        for name, text in SECTIONS.items():
            self.section_box.addItem(text, name)
        self.section_box.setToolTip("which part of the layer to show; one part at a time keeps every "
                                    "matrix large enough for a slide")
        self.section_box.currentIndexChanged.connect(lambda _i: self._section_changed())
        controls = QHBoxLayout()
        controls.addWidget(QLabel("show:"))
        controls.addWidget(self.section_box)
        controls.addStretch(1)
        self._lay_out(controls)
        self.slider = _SectionStep(self.section_box)  # what presentation mode's Page Down/Up step
        # every label at least the docked 12 px, presented too: presenting's floor in proportion to the screen
        # (8 px at 720 lines) let F5 fit a 32 × 32 model's 24 X/Q/K/V row names and the overview's into 7-px
        # type, smaller than the docked figure's (issue 36); rows that do not fit are named every k-th instead
        self.setProperty(HELD_FLOOR, DOCKED_FLOOR_PT)

    def _section_changed(self) -> None:
        # one head's parts show a window of a longer input's rows (NAMED_ROWS): computed anew when that differs
        if self.trace is not None and self._form_key is not None and self._form_key[3] != self._window()[1]:
            self._update()
        else:
            self._draw()

    def set_step(self, index: int) -> None:
        """Show part ``index`` of :data:`SECTIONS` (clamped): the clicker walks through the layer."""
        self.section_box.setCurrentIndex(max(0, min(int(index), self.section_box.count() - 1)))

    @property
    def section(self) -> str:
        return self.section_box.currentData()

    def set_section(self, name: str) -> None:
        """Show one part of the layer: "head", "heads", "block" or "all"."""
        if name not in SECTIONS:
            raise ValueError(f"section {name!r} must be one of {', '.join(SECTIONS)}")
        self.section_box.setCurrentIndex(self.section_box.findData(name))

    # -- the view contract ---------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        self.form, self._form_key = None, None
        self._update()

    def _selection_changed(self, state, changed) -> None:
        if changed & {"layer", "head", "part", "query"}:
            self._update()

    def _style_changed(self) -> None:
        if self._stale:  # hidden and behind the trace or selection (its form may be another layer's): showing it redraws
            return
        self._draw()

    # -- computing ------------------------------------------------------------------------------------
    def _where(self):
        t = self.trace
        s = self.state
        part = s.part if (s.part == "cross" and t.has_cross) or (s.part == "enc" and t.n_enc_layers) else "self"
        n_layers = t.layers_in(part)
        return part, min(s.layer, n_layers - 1), min(s.head, t.n_heads - 1)

    def _update(self) -> None:
        if self._skip_while_hidden():
            return
        if self.trace is None:
            self.form = None
            self._draw()
            return
        part, layer, _ = self._where()
        from attnviz.analysis.steps import compute_matrix_form

        T, window = self._window()
        key = (id(self.trace), part, layer, window)
        if key == self._form_key and self.form is not None:
            self._draw()
            return
        self._form_key, self.form = key, None
        if T <= SYNC_LIMIT or self._forcing:
            try:
                self._form_ready(key, compute_matrix_form(self.trace, layer, part, window))
            except (AttnvizError, KeyError) as exc:
                self._show_message(f"cannot show the matrix form: {exc}")
            return
        from attnviz.gui.workers import run_job

        where = f", positions {window[0]}–{window[1] - 1} around the query" if window else ""
        self._show_message(f"computing the matrices of layer {layer} ({T:,} tokens{where})…")
        self._pending = run_job(compute_matrix_form, self.trace, layer, part, window,
                                on_result=lambda form, k=key: self._form_ready(k, form),
                                on_error=self._show_message, owner=self)

    def _window(self) -> tuple[int, tuple[int, int] | None]:
        """The input's length and the positions [a, b) shown around the selected query (None: all of them)."""
        part, layer, _ = self._where()
        T = self.trace[layer_prefix(layer, part) + "x"].shape[0]
        query = self.state.query if self.state.query is not None else T - 1
        if T > WINDOW_ABOVE:
            return T, position_window(T, query, WINDOW_TOKENS)
        named = min(NAMED_ROWS, self.page_rows or NAMED_ROWS)
        if T > named and self.section in ("head", "output"):
            return T, position_window(T, query, named)  # a row per token, each named
        return T, None

    # -- a small page ----------------------------------------------------------------------------------
    page_rows: int | None = None  # an export's page names this many rows of the one-head parts (None: NAMED_ROWS)

    def fit_page_rows(self, fits) -> bool:
        """Show the fewest-cut window of positions around the selected query whose every row ``fits()`` names at
        the page's floor (figure.page_layout: a 1280×720 page names ~12 of 24 rows in both bands at 12 px, or
        keeps all 24 at 8 px); False when no window helps (another part, or the rows were not the problem)."""
        if self.section not in ("head", "output") or self.trace is None:
            return False
        T, _ = self._window()
        for rows in PAGE_ROWS:
            if rows >= T:
                continue
            self.page_rows = rows
            self._recompute()
            if fits():
                return True
        self.release_page_rows()
        return False

    def release_page_rows(self) -> None:
        """Every row again (NAMED_ROWS), as the screen shows them, after an export's page."""
        if self.page_rows is not None:
            self.page_rows = None
            self._recompute()

    def _recompute(self) -> None:
        self._forcing = True  # computed now (the export paints next), shown or not
        try:
            self._update()
        finally:
            self._forcing = False
        # the board rebuilt its grids: Qt queues the show of a widget added to a visible parent for the next
        # turn of the event loop, and an export paints before that turn (a 17-token ViT's page came out blank)
        for child in self.figure_widget.findChildren(QWidget):
            if child.isHidden() and not child.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide):
                child.show()

    def _form_ready(self, key, form) -> None:
        if key != self._form_key:
            return  # a newer layer or trace was asked for meanwhile
        self.form = form
        self._draw()

    def _show_message(self, text: str) -> None:
        self.board.clear()
        self.grids = {}
        self.board.add_heading("Matrix form", text)
        self.board.finish()

    # -- drawing -----------------------------------------------------------------------------------------
    def _draw(self) -> None:
        if self.trace is None or self.form is None:
            if self.trace is None:
                self._show_message(self.empty_text if self.empty_reason
                                   else "load a model and run an input to see its matrices")
            return
        t, f = self.trace, self.form
        part, layer, head = self._where()
        self.board.clear()
        # the board deletes its rows' widgets: the diagram is made anew each time, a child of the board
        # (a parentless one not put in a row was a top-level window that outlived the view)
        if self.gqa is not None and shiboken6.isValid(self.gqa):
            self.gqa.deleteLater()
        self.gqa = GqaDiagram(self.style, self.board)
        self.gqa.set_heads(t.n_heads, t.n_kv_heads, head)
        self.grids = {}
        from attnviz.analysis.decoder_positions import row_labels  # "→ token produced" on cross rows

        (a, b), (ka, kb) = f.rows or (0, f.X.shape[0]), f.cols or (0, f.K.shape[1])  # a long input's window
        q_tok, k_tok = list(row_labels(t, part))[a:b], list(t.key_tokens(part))[ka:kb]
        q_tok = q_tok if len(q_tok) == f.X.shape[0] else [str(i) for i in range(a, a + f.X.shape[0])]
        k_tok = k_tok if len(k_tok) == f.K.shape[1] else [str(i) for i in range(ka, ka + f.K.shape[1])]
        Tq, D = f.X.shape
        Tk, dh = f.K.shape[1], f.Q.shape[2]
        H = f.Q.shape[0]
        kv = head // t.description.kv_group
        sel_q = self.state.query - a if self.state.query is not None else None
        hl = [sel_q] if sel_q is not None and 0 <= sel_q < Tq else []
        gqa = f" (reads key/value head {kv})" if t.n_kv_heads < t.n_heads else ""
        m = (" + B" if f.bias is not None else "") + (" + M" if np.isneginf(f.mask).any() else "")
        qk = f"Q Kᵀ × {f.scale:.4g}"
        if f.softcap:  # Gemma 2's soft-cap around the scaled scores
            qk = f"{f.softcap:g}·tanh({qk} / {f.softcap:g})"
        section = self.section
        ctx = _Context(t, f, layer, part, head, q_tok, k_tok, hl)
        if f.windowed and self.page_rows:  # an export's small page (page_layout): said first, as below
            # (no "a 1920×1080 page shows all": at the 12-px ink floor a 23-token slide shows 16, issue 36)
            self.board.add_note(f"this page names {b - a} of the {f.n_queries} rows: queries {a}–{b - 1} and keys "
                                f"{ka}–{kb - 1}, around the selected query; "
                                f"each row's softmax, Z and A are over all {f.n_keys} keys", 1.2)
        elif f.windowed:  # said first: every matrix below is this window's
            why = "a long input" if f.n_queries > WINDOW_ABOVE else f"{b - a} rows, each named"
            self.board.add_note(f"{why}: queries {a}–{b - 1} and keys {ka}–{kb - 1} of {f.n_queries:,} "
                                f"(around the selected query) are shown; each row's softmax, Z and A are over all "
                                f"{f.n_keys:,} keys", 1.2)
        if section == "block":
            self.board.add_heading(f"Layer {layer} · the block around attention", self._symbols(ctx))
        elif section == "heads":
            from attnviz.analysis.head_diversity import head_tv

            # how different the heads are on this input (mean total-variation distance between their rows)
            tv = head_tv(f.P) if f.P.ndim == 3 else float("nan")
            zs = ", ".join(f"Z_{h}" for h in range(H)) if H <= 4 else f"Z_0 … Z_{H - 1}"
            self.board.add_heading(f"Layer {layer} · {H} heads, one output:  A = concat({zs}) W_O",
                                   f"{self._symbols(ctx)} · {Tq} queries, d_head {dh}, d_model {D} · the heads "
                                   f"differ by {tv:.2f} on {'the window shown' if f.windowed else 'this input'} "
                                   "(mean total-variation distance of their rows)")
        else:
            self.board.add_heading(f"Layer {layer} · head {head}{gqa}:  Z = softmax({qk}{m}) V",
                                   f"{self._symbols(ctx)} · {Tq} queries, {Tk} keys, d_model {D}, d_head {dh}")
        if section == "head":
            self._one_head_rows(ctx)
        elif section == "output":
            self._output_rows(ctx)
        elif section == "heads":
            self._concat_row(ctx, H, dh)
        elif section == "block":
            self._block_rows(ctx, large=True)
        else:
            self._attention_rows(ctx)
            self._multi_head_rows(ctx, H, dh)
            self._block_rows(ctx, large=False)
        if self.gqa not in self.board.items:  # not drawn in this part: not a stray box over the figure
            self.gqa.hide()
        self.board.finish()

    def _symbols(self, c: "_Context") -> str:
        """One line saying what X (and E, R) are for this model and part."""
        pre = c.t.description.norm_placement == "pre"
        ln = norm_label(c.t.description)  # RMSNorm for a Llama-family model, LN (LayerNorm) otherwise
        x = f"X = {ln}(R): what the projections read; R: the residual stream into the block" if pre else \
            f"X = R: the residual stream into the block (post-{ln}: normalised after each addition)"
        if c.part == "cross":
            return f"{x} (decoder) · E: the encoder's output"
        return x


class _SectionStep:
    """``value()`` and ``maximum()``: the index of the part on screen and the last one, as presentation mode's
    Page Down/Up and its hint ("part 2 of 5") read a slider (without ``maximum`` F5 raised in the hint)."""

    def __init__(self, box: QComboBox):
        self._box = box

    def value(self) -> int:
        return self._box.currentIndex()

    def maximum(self) -> int:
        return self._box.count() - 1
