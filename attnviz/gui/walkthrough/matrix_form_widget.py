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
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel

from attnviz.analysis.model_labels import norm_label
from attnviz.capture.trace import layer_prefix
from attnviz.errors import AttnvizError
from attnviz.gui.style import head_colour
from attnviz.gui.walkthrough.gqa_diagram import GqaDiagram
from attnviz.gui.walkthrough.walkthrough_view import WalkthroughView

__all__ = ["MatrixFormWidget", "SYNC_LIMIT", "SECTIONS", "SQUARE_SIDE", "PRESENTED_SIDE", "WINDOW_ABOVE",
           "WINDOW_TOKENS"]

SYNC_LIMIT = 128  # above this many tokens the matrices are computed off the GUI thread
# a longer input shows WINDOW_TOKENS positions around the selected query (its T×T maps could not be shown
# or held: 16,384 tokens are 2 GB a map in float64); the heading says which
WINDOW_ABOVE = 256
WINDOW_TOKENS = 128
GQA_BESIDE = 8  # up to this many query heads the GQA diagram stands beside Q, K, V; more get a row of their own
# px asked for each side of a T×T map in the one-head part: export lays a 1920×1080 slide out at
# 1067×600 and scales it ×1.8, so 180 here is 324 px on the slide (and 180 px in a window)
SQUARE_SIDE = 180
# px asked for in presentation mode (large type, shown 1:1 on the projector): a slide's 300 px and a margin
PRESENTED_SIDE = 320
SECTIONS = {  # name → what the chooser says
    "head": "one head: X → Q, K, V → P",
    "output": "one head: Z = P V → A",
    "heads": "all heads: concat(Z) W_O",
    "block": "the block: residual stream + MLP",
    "all": "overview: everything at once (small)",
}


def _stream_in(trace, layer: int, part: str) -> np.ndarray | None:
    """The residual stream entering the block: the embeddings for layer 0, else the previous block's output."""
    base = "enc." if part == "enc" else ""
    key = f"{base}emb.sum" if layer == 0 else f"{base}L{layer - 1}.resid"
    return trace[key] if key in trace else None  # float64 once cut to the rows shown


def _has(trace, key: str) -> bool:
    """Whether the model has this bias: its config says so (native models), else a nonzero entry."""
    if key not in trace:
        return False
    declared = trace.meta.get("config", {}).get("attn_bias")
    return bool(declared) if declared is not None else bool(np.any(np.asarray(trace[key])))


class MatrixFormWidget(WalkthroughView):
    """The selected layer in matrix form; the selected head is drawn in detail."""

    title = "Matrix form"

    def _build(self) -> None:
        self.form = None  # the MatrixForm on screen
        self._form_key = None
        self._pending = None
        self.gqa = None  # made with each drawing (_draw)
        self.section_box = QComboBox()
        for name, text in SECTIONS.items():
            self.section_box.addItem(text, name)
        self.section_box.setToolTip("which part of the layer to show; one part at a time keeps every "
                                    "matrix large enough for a slide")
        self.section_box.currentIndexChanged.connect(lambda _i: self._draw())
        controls = QHBoxLayout()
        controls.addWidget(QLabel("show:"))
        controls.addWidget(self.section_box)
        controls.addStretch(1)
        self._lay_out(controls)
        self.slider = _SectionStep(self.section_box)  # what presentation mode's Page Down/Up step

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
        from attnviz.analysis.steps_window import position_window

        T = self.trace[layer_prefix(layer, part) + "x"].shape[0]
        window = position_window(T, self.state.query if self.state.query is not None else T - 1, WINDOW_TOKENS) \
            if T > WINDOW_ABOVE else None
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
                self._show_message("load a model and run an input to see its matrices")
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
        if f.windowed:  # said first: every matrix below is this window's
            self.board.add_note(f"a long input: queries {a}–{b - 1} and keys {ka}–{kb - 1} of {f.n_queries:,} "
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
            self._multi_head_rows(ctx, H, dh, large=False)
            self._block_rows(ctx, large=False)
        if self.gqa not in self.board.items:  # not drawn in this part: not a stray box over the figure
            self.gqa.hide()
        self.board.finish()

    def _symbols(self, c: "_Context") -> str:
        """One line saying what X (and E, R) are for this model and part."""
        pre = c.t.description.norm_placement == "pre"
        ln = norm_label(c.t.meta)  # RMSNorm for a Llama-family model, LN (LayerNorm) otherwise
        x = f"X = {ln}(R): what the projections read; R: the residual stream into the block" if pre else \
            f"X = R: the residual stream into the block (post-{ln}: normalised after each addition)"
        if c.part == "cross":
            return f"{x} (decoder) · E: the encoder's output"
        return x

    def _formula(self, c: "_Context", name: str) -> str:
        """ "Q = X W_Q + b_Q" with the bias only when the model has one; E for cross-attention keys."""
        src = "E" if c.part == "cross" and name in ("K", "V") else "X"
        if c.f.kv_source == "trace" and name in ("K", "V"):
            return f"{name} (recorded)"
        bias = f" + b_{name}" if _has(c.t, c.prefix + f"b_{name.lower()}") else ""
        if c.f.rotary_dims and name in ("Q", "K"):  # rotary: Q and K shown after the rotation by position
            inner = f"norm({src} W_{name}{bias})" if c.t.description.qk_norm else f"{src} W_{name}{bias}"
            return f"{name} = rotate({inner})"
        return f"{name} = {src} W_{name}{bias}"

    def _qkv_row(self, c: "_Context", large: bool) -> None:
        f, Tq, D = c.f, c.f.X.shape[0], c.f.X.shape[1]
        Tk, dh = f.K.shape[1], f.Q.shape[2]
        self.board.add_row([
            # large: X twice as wide as each of Q, K, V (d_model > d_head); widths by these factors alone
            # (equal): asked by size, a 512-column X squeezed the last of Q, K, V (V 3.3-px columns, Q 5.7)
            (self._grid("X", f.X, "X", subtitle=f"{Tq} × {D}", row_labels=c.q_tok, highlight_rows=c.hl),
             6 if large else 1), "→",
            # Q, K, V are what the row is about: they get room for their numbers before X does
            (self._grid("Q", f.Q[c.head], self._formula(c, "Q"), subtitle=f"{Tq} × {dh}", row_labels=c.q_tok,
                        highlight_rows=c.hl), 3),
            (self._grid("K", f.K[c.head], self._formula(c, "K"), subtitle=f"{Tk} × {dh}", row_labels=c.k_tok), 3),
            (self._grid("V", f.V[c.head], self._formula(c, "V"), subtitle=f"{Tk} × {dh}", row_labels=c.k_tok), 3),
        ] + ([self.gqa] if c.t.n_kv_heads < c.t.n_heads and c.t.n_heads <= GQA_BESIDE else []),
            stretch=0 if large else 6, equal=large)
        if GQA_BESIDE < c.t.n_heads and c.t.n_kv_heads < c.t.n_heads:  # 9–32 heads: a row of its own, whole
            self.gqa.setMaximumHeight(self.gqa.sizeHint().height())
            self.board.add_row([self.gqa], stretch=0)

    def _square_side(self) -> float:
        """Pixels each T×T map asks for: a slide's 300 px once exported, or on screen when presenting."""
        return PRESENTED_SIDE if self.style.font_scale > 1 else SQUARE_SIDE

    def _one_head_rows(self, c: "_Context") -> None:
        """X → Q, K, V; Q Kᵀ → scaled (and masked) → P: large maps with token labels."""
        f, head = c.f, c.head
        Tq, Tk = f.X.shape[0], f.K.shape[1]
        self._qkv_row(c, large=True)
        first = set(self.grids)
        square = dict(row_labels=c.q_tok, col_labels=c.k_tok, highlight_rows=c.hl, min_side=self._square_side())
        masked = bool(np.isneginf(f.mask).any())
        # scaling and masking in one step: a third T×T map would not leave each one room on a slide
        row = [(self._grid("QK", f.QK[head], "Q Kᵀ", subtitle=f"{Tq} × {Tk}", **square), 4)]
        if masked:
            row += [f"× {f.scale:.4g}" + (f", cap {f.softcap:g}" if f.softcap else "")
                    + (" + B" if f.bias is not None else "") + " + M =",
                    (self._grid("masked", f.masked[head], ("capped" if f.softcap else "scaled")
                                + (" + B" if f.bias is not None else "") + " + M", subtitle=f"{Tq} × {Tk}",
                                **square), 4)]
        else:
            row += [f"× {f.scale:.4g} =",
                    (self._grid("scaled", f.scaled[head], "scaled", subtitle=f"{Tq} × {Tk}", **square), 4)]
        # operators on one line ("× 0.25 =", "softmax →"): square cells leave them the width
        row += ["softmax →", (self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", **square), 4)]
        # the T×T maps take the spare height; smaller operators leave them the width
        self.board.add_row(row, stretch=1, op_factor=1.0, equal=True)
        self._modest(first)

    def _output_rows(self, c: "_Context") -> None:
        """P V = Z for the selected head, then every head's Z concatenated × W_O (+ b_O) = A."""
        f, head = c.f, c.head
        Tq, Tk, dh, D = f.X.shape[0], f.K.shape[1], f.Q.shape[2], f.X.shape[1]
        H = f.Q.shape[0]
        self.board.add_row([
            (self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", row_labels=c.q_tok,
                        col_labels=c.k_tok, highlight_rows=c.hl, min_side=self._square_side()), 4), "×",
            (self._grid("V", f.V[head], self._formula(c, "V"), subtitle=f"{Tk} × {dh}", row_labels=c.k_tok), 3),
            "=",
            (self._grid("Z", f.Z[head], f"Z = P V  (head {head})", subtitle=f"{Tq} × {dh}", row_labels=c.q_tok,
                        highlight_rows=c.hl, frame_colour=head_colour(head)), 3),
        ], stretch=1, op_factor=1.5)
        b_o = _has(c.t, c.prefix + "b_o")
        self.board.add_row([
            (self._grid("concat", f.concat, "concat(Z_0 … Z_" + f"{H - 1})", subtitle=f"{Tq} × {H * dh}",
                        row_labels=c.q_tok, highlight_rows=c.hl), 3),
            "×", (self._grid("W_O", f.W_O, "W_O", subtitle=f"{H * dh} × {D}"), 2),
        ] + (["+", self._grid("b_O", f.b_O, "b_O", subtitle=f"1 × {D}")] if b_o else []) + [
            "=",
            (self._grid("out", f.out, "A (attention output)", subtitle=f"{Tq} × {D}", row_labels=c.q_tok,
                        highlight_rows=c.hl), 3),
        ], stretch=0, op_factor=1.5)
        self._modest(set(self.grids) - {"P"})

    def _modest(self, names) -> None:
        """The T×T maps ask for their 300 px first; these grids share what is left."""
        for name in names:
            g = self.grids[name]
            g.modest = True
            g.compact = self.style.font_scale > 1  # presenting: the T×T maps are the message
            g.updateGeometry()

    def _attention_rows(self, c: "_Context") -> None:
        f, head = c.f, c.head
        Tq, Tk, dh = f.X.shape[0], f.K.shape[1], f.Q.shape[2]
        self._qkv_row(c, large=False)
        square = dict(row_labels=c.q_tok, col_labels=c.k_tok, highlight_rows=c.hl)
        row = [(self._grid("QK", f.QK[head], "Q Kᵀ", subtitle=f"{Tq} × {Tk}", **square), 2),
               f"× {f.scale:.4g}",
               (self._grid("scaled", f.scaled[head], "scaled", subtitle=f"{Tq} × {Tk}", **square), 2)]
        if np.isneginf(f.mask).any():
            row += ["+ M", (self._grid("masked", f.masked[head], "masked", subtitle=f"{Tq} × {Tk}", **square), 2)]
        row += ["softmax", (self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", **square), 2),
                "V =", (self._grid("Z", f.Z[head], "Z = P V", subtitle=f"{Tq} × {dh}", row_labels=c.q_tok,
                                   highlight_rows=c.hl, frame_colour=head_colour(head)), 3)]
        self.board.add_row(row, stretch=6)

    def _concat_row(self, c: "_Context", H: int, dh: int) -> None:
        """All heads' Z concatenated × W_O = A, to scale (one column unit), each head's pattern above its Z."""
        from attnviz.gui.walkthrough.concat_figure import ConcatFigure

        f = c.f
        Tq, D = f.X.shape
        b_o = _has(c.t, c.prefix + "b_o")
        self.board.add_note(f"Multi-head: the {H} heads' Z side by side ({Tq} × {H}·{dh} = {Tq} × {H * dh}), "
                            f"times W_O ({H * dh} × {D})" + (" plus b_O" if b_o else "") + " = A, to scale (a column is "
                            "as wide in every matrix)",
                            factor=1.2)
        gate = f.concat.reshape(Tq, H, dh).transpose(1, 0, 2)  # (H, Tq, dh) as concatenated
        ablated = [h for h in range(H) if not np.array_equal(gate[h], f.Z[h])]
        self.concat_figure = ConcatFigure(self.style)
        self.concat_figure.set_data(gate, f.W_O, f.out, c.q_tok, P=f.P if f.P.ndim == 3 else None,
                                    b_O=f.b_O if b_o else None, selected=c.head,
                                    query=c.hl[0] if c.hl else None, ablated=ablated)
        self.board.add_row([self.concat_figure], stretch=4)

    def _multi_head_rows(self, c: "_Context", H: int, dh: int, large: bool) -> None:
        f = c.f
        Tq, D = f.X.shape
        b_o = _has(c.t, c.prefix + "b_o")
        self.board.add_note(f"Multi-head: the {H} heads' Z side by side ({Tq} × {H}·{dh} = {Tq} × {H * dh}), "
                            f"times W_O ({H * dh} × {D})" + (" plus b_O" if b_o else "") + " = A", factor=1.4)
        # a head switched off by the what-if lab enters the concatenation times its gate (0)
        gate = f.concat.reshape(Tq, H, dh).transpose(1, 0, 2)  # (H, Tq, dh) as concatenated
        zs = []
        for h in range(H):
            ablated = not np.array_equal(gate[h], f.Z[h])
            title = f"Z_{h}" + (" ◀" if h == c.head else "") + (" (ablated)" if ablated else "")
            zs.append(self._grid(f"Z{h}", gate[h], title, subtitle=f"{Tq}×{dh}",
                                 row_labels=c.q_tok if h == 0 else None, highlight_rows=c.hl,
                                 frame_colour=head_colour(h)))
        self.board.add_row(zs + ["× W_O", self._grid("W_O", f.W_O, "W_O", subtitle=f"{H * dh} × {D}")]
                           + (["+ b_O", self._grid("b_O", f.b_O, "b_O", subtitle=f"1 × {D}")] if b_o and large else [])
                           + ["=", self._grid("out", f.out, "A (attention output)", subtitle=f"{Tq} × {D}",
                                              row_labels=c.q_tok if large else None, highlight_rows=c.hl)],
                           stretch=4)

    def _block_rows(self, c: "_Context", large: bool) -> None:
        t, f, layer, part, q_tok, hl = c.t, c.f, c.layer, c.part, c.q_tok, c.hl
        base = "enc." if part == "enc" else ""
        h_key, r_key = f"{base}L{layer}.h", f"{base}L{layer}.resid"
        stream = _stream_in(t, layer, part)
        if part == "cross" or h_key not in t or stream is None:
            self.board.add_note("the residual stream and MLP are shown with the self-attention of this layer")
            return
        a, b = f.rows or (0, f.X.shape[0])  # a long input: the window's rows
        h, resid = np.asarray(t[h_key][a:b], dtype=np.float64), np.asarray(t[r_key][a:b], dtype=np.float64)
        stream = stream[a:b]
        Tq, D = h.shape
        pre = t.description.norm_placement == "pre"
        ln = norm_label(t.meta)
        cross = t.has_cross and part == "self"
        after = "cross-attention + MLP" if cross else "MLP"
        labels = q_tok if large else None
        sub = f"{Tq} × {D}"
        stream = np.asarray(stream, dtype=np.float64)
        stream_grid = self._grid("stream", stream, "R (residual stream in)", subtitle=sub, row_labels=q_tok,
                                 highlight_rows=hl)
        out_grid = self._grid("out2", f.out, "A (attention output)", subtitle=sub, row_labels=labels,
                              highlight_rows=hl)
        mid = self._grid("h", h, f"R_mid (L{layer}.h)", subtitle=sub, row_labels=labels, highlight_rows=hl)
        last = self._grid("resid", resid, f"R_out (L{layer}.resid)", subtitle=sub, row_labels=labels,
                          highlight_rows=hl)
        if pre:
            self.board.add_note(f"Block (pre-{ln}): X = {ln}(R);  R_mid = R + A;  R_out = R_mid + {after}({ln}(R_mid)), "
                                "the next block's R", 1.4)
            mlp = self._grid("mlp", resid - h, f"{after}({ln}(R_mid))", subtitle=sub, row_labels=labels,
                             highlight_rows=hl)
            if large:  # two rows: each addition gets the width of the slide
                self.board.add_row([stream_grid, "+", out_grid, "=", mid], stretch=3)
                self.board.add_row([self._grid("h2", h, "R_mid", subtitle=sub, row_labels=q_tok, highlight_rows=hl),
                                    "+", mlp, "=", last], stretch=3)
            else:
                self.board.add_row([stream_grid, "+", out_grid, "=", mid, "+", mlp, "=", last], stretch=3)
        else:
            self.board.add_note(f"Block (post-{ln}, as in the original transformer): X = R;  "
                                f"R_mid = {ln}(R + A);  R_out = {ln}(R_mid + {after}(R_mid))", 1.4)
            self.board.add_row([stream_grid, "+", out_grid, f"→ {ln} →", mid, f"→ + {after}, {ln} →", last], stretch=3)


class _Context:
    """What every row of one drawing needs (trace, form, where, labels)."""

    def __init__(self, t, f, layer, part, head, q_tok, k_tok, hl):
        self.t, self.f, self.layer, self.part, self.head = t, f, layer, part, head
        self.q_tok, self.k_tok, self.hl = q_tok, k_tok, hl
        self.prefix = layer_prefix(layer, part)



class _SectionStep:
    """``value()``: the index of the part on screen, as presentation mode's Page Down/Up read it."""

    def __init__(self, box: QComboBox):
        self._box = box

    def value(self) -> int:
        return self._box.currentIndex()
