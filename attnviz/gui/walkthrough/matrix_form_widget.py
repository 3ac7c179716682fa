"""Self-attention of a whole layer as matrices: Q = XW_Q … Z = PV, the heads concatenated × W_O, then the block.

Rows of grids, shapes in every title: the selected head's Q, K, V, QKᵀ, scaled, masked, P and Z; all
heads' Z concatenated and multiplied by W_O; the residual connection, LayerNorm and the MLP (read from
``L{i}.h`` and ``L{i}.resid``). For GQA models a diagram shows which query heads share a key/value head.
The matrices come from :func:`attnviz.analysis.steps.compute_matrix_form`; long inputs are computed on
the thread pool, never on the GUI thread.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from attnviz.capture.trace import layer_prefix
from attnviz.errors import AttnvizError
from attnviz.gui.style import ViewStyle, head_colour
from attnviz.gui.walkthrough.figure import FigureBoard, FigureHostMixin, FigureWidget
from attnviz.gui.walkthrough.gqa_diagram import GqaDiagram
from attnviz.gui.walkthrough.matrix_grid import MatrixGrid
from attnviz.gui.walkthrough.walkthrough_widget import connect_selection
from attnviz.selection import Selection

__all__ = ["MatrixFormWidget", "SYNC_LIMIT"]

SYNC_LIMIT = 128  # above this many tokens the matrices are computed off the GUI thread


def _stream_in(trace, layer: int, part: str) -> np.ndarray | None:
    """The residual stream entering the block: the embeddings for layer 0, else the previous block's output."""
    base = "enc." if part == "enc" else ""
    key = f"{base}emb.sum" if layer == 0 else f"{base}L{layer - 1}.resid"
    return np.asarray(trace[key], dtype=np.float64) if key in trace else None


class MatrixFormWidget(FigureHostMixin, QWidget):
    """The selected layer in matrix form; the selected head is drawn in detail."""

    title = "Matrix form"

    def __init__(self, selection: Selection | None = None, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.style = style or ViewStyle()
        self.trace = None
        self.form = None  # the MatrixForm on screen
        self._form_key = None
        self._pending = None
        self.grids: dict[str, MatrixGrid] = {}
        self.selection: Selection | None = None
        self._listener = None
        self.figure_widget = FigureWidget(self.style)
        fl = QVBoxLayout(self.figure_widget)
        fl.setContentsMargins(0, 0, 0, 0)
        self.gqa = GqaDiagram(self.style)
        self.board = FigureBoard(self.style)
        fl.addWidget(self.board, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.figure_widget)
        self.status = QLabel(" ")
        # fewer rows, larger grids: a lecturer shows one part of the layer at a time on a projector
        self.parts = {name: QCheckBox(label) for name, label in (
            ("attention", "one head: Q, K, V … Z"), ("heads", "all heads × W_O"), ("block", "residual + MLP"))}
        controls = QHBoxLayout()
        controls.addWidget(QLabel("show:"))
        for box in self.parts.values():
            box.setChecked(True)
            box.toggled.connect(lambda _on: self._draw())
            controls.addWidget(box)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(controls)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.status)
        self.set_selection(selection or Selection())

    # -- the view contract ---------------------------------------------------------------------------
    def set_trace(self, trace) -> None:
        self.trace, self.form, self._form_key = trace, None, None
        self._update()

    def set_selection(self, selection: Selection) -> None:
        if self.selection is not None and self._listener is not None:
            self.selection.disconnect(self._listener)
        self.selection = selection
        self._listener = connect_selection(self, selection)
        self._update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self.figure_widget.set_style(style)
        self.board.set_style(style)
        self._draw()

    @property
    def hover_text(self) -> str:
        return self.status.text().strip()

    def _selection_changed(self, state, changed) -> None:
        if changed & {"layer", "head", "part", "query"}:
            self._update()

    # -- computing ------------------------------------------------------------------------------------
    def _where(self):
        t = self.trace
        s = self.selection.state
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
        key = (id(self.trace), part, layer)
        if key == self._form_key and self.form is not None:
            self._draw()
            return
        from attnviz.analysis.steps import compute_matrix_form

        T = self.trace[layer_prefix(layer, part) + "x"].shape[0]
        self._form_key, self.form = key, None
        if T <= SYNC_LIMIT or self._forcing:
            try:
                self._form_ready(key, compute_matrix_form(self.trace, layer, part))
            except (AttnvizError, KeyError) as exc:
                self._show_message(f"cannot show the matrix form: {exc}")
            return
        from attnviz.gui.workers import run_job

        self._show_message(f"computing the matrices of layer {layer} ({T} tokens)…")
        self._pending = run_job(compute_matrix_form, self.trace, layer, part,
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
    def _grid(self, name: str, values, title: str, **kw) -> MatrixGrid:
        g = MatrixGrid(name, self.style)
        g.set_data(values, title=title, **kw)
        g.hovered.connect(lambda text: self.status.setText(text or " "))
        self.grids[name] = g
        return g

    def _draw(self) -> None:
        if self.trace is None or self.form is None:
            if self.trace is None:
                self._show_message("load a model and run an input to see its matrices")
            return
        t, f = self.trace, self.form
        part, layer, head = self._where()
        self.board.clear()
        # the board deletes its rows' widgets: the diagram is made anew each time
        self.gqa = GqaDiagram(self.style)
        self.gqa.set_heads(t.n_heads, t.n_kv_heads, head)
        self.grids = {}
        q_tok, k_tok = t.query_tokens(part), t.key_tokens(part)
        k_tok = k_tok if len(k_tok) == f.K.shape[1] else [str(i) for i in range(f.K.shape[1])]
        Tq, D = f.X.shape
        Tk, dh = f.K.shape[1], f.Q.shape[2]
        H = f.Q.shape[0]
        kv = head // int(t.meta.get("kv_group", 1))
        sel_q = self.selection.state.query
        hl = [sel_q] if sel_q is not None else []
        gqa = f" (reads key/value head {kv})" if t.n_kv_heads < t.n_heads else ""
        m = " + M" if np.isneginf(f.mask).any() else ""
        self.board.add_heading(f"Layer {layer} · head {head}{gqa}:  Z = softmax(Q Kᵀ × {f.scale:.4g}{m}) V",
                               f"{part} attention · {Tq} query tokens, {Tk} keys · d_model = {D}, d_head = {dh}")
        if self.parts["attention"].isChecked():
            self._attention_rows(t, f, layer, part, head, q_tok, k_tok, hl)
        if self.parts["heads"].isChecked():
            self._multi_head_rows(f, H, Tq, D, dh, q_tok, hl, head)
        if self.parts["block"].isChecked():
            self._block_rows(t, f, layer, part, q_tok, hl)
        self.board.finish()

    def _attention_rows(self, t, f, layer: int, part: str, head: int, q_tok, k_tok, hl) -> None:
        Tq, D = f.X.shape
        Tk, dh = f.K.shape[1], f.Q.shape[2]
        W_q = f"X W_Q{'' if not np.any(t[layer_prefix(layer, part) + 'b_q']) else ' + b_Q'}"
        self.board.add_row([
            self._grid("X", f.X, "X", subtitle=f"{Tq} × {D}", row_labels=q_tok, highlight_rows=hl), "→",
            # Q, K, V are what the row is about: they get room for their numbers before X does
            (self._grid("Q", f.Q[head], f"Q = {W_q}", subtitle=f"{Tq} × {dh}", row_labels=q_tok,
                        highlight_rows=hl), 3),
            (self._grid("K", f.K[head], "K = X W_K", subtitle=f"{Tk} × {dh}", row_labels=k_tok), 3),
            (self._grid("V", f.V[head], "V = X W_V", subtitle=f"{Tk} × {dh}", row_labels=k_tok), 3),
        ] + ([self.gqa] if t.n_kv_heads < t.n_heads else []), stretch=6)
        square = dict(row_labels=q_tok, col_labels=k_tok, highlight_rows=hl)
        # the score matrices get the same room as P: at one share they shrank to a smudge beside it
        row = [(self._grid("QK", f.QK[head], "Q Kᵀ", subtitle=f"{Tq} × {Tk}", **square), 2),
               f"× {f.scale:.4g}",
               (self._grid("scaled", f.scaled[head], "scaled", subtitle=f"{Tq} × {Tk}", **square), 2)]
        if np.isneginf(f.mask).any():
            row += ["+ M", (self._grid("masked", f.masked[head], "masked", subtitle=f"{Tq} × {Tk}", **square), 2)]
        row += ["softmax", (self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", **square), 2),
                "V =", (self._grid("Z", f.Z[head], "Z = P V", subtitle=f"{Tq} × {dh}", row_labels=q_tok,
                                   highlight_rows=hl, frame_colour=head_colour(head)), 3)]
        self.board.add_row(row, stretch=6)

    def _multi_head_rows(self, f, H, Tq, D, dh, q_tok, hl, head) -> None:
        self.board.add_note(f"Multi-head: the {H} heads' Z side by side ({Tq} × {H}·{dh} = {Tq} × {H * dh}), "
                            f"times W_O ({H * dh} × {D}) plus b_O", factor=1.4)
        # a head switched off by the what-if lab enters the concatenation times its gate (0)
        gate = f.concat.reshape(Tq, H, dh).transpose(1, 0, 2)  # (H, Tq, dh) as concatenated
        zs = []
        for h in range(H):
            ablated = not np.array_equal(gate[h], f.Z[h])
            title = f"Z_{h}" + (" ◀" if h == head else "") + (" (ablated)" if ablated else "")
            zs.append(self._grid(f"Z{h}", gate[h], title, subtitle=f"{Tq}×{dh}", row_labels=q_tok if h == 0 else None,
                                 highlight_rows=hl, frame_colour=head_colour(h)))
        self.board.add_row(zs + ["× W_O", self._grid("W_O", f.W_O, "W_O", subtitle=f"{H * dh} × {D}"), "=",
                                 self._grid("out", f.out, "attention out", subtitle=f"{Tq} × {D}", highlight_rows=hl)],
                           stretch=4)

    def _block_rows(self, t, f, layer: int, part: str, q_tok, hl) -> None:
        base = "enc." if part == "enc" else ""
        h_key, r_key = f"{base}L{layer}.h", f"{base}L{layer}.resid"
        stream = _stream_in(t, layer, part)
        if part == "cross" or h_key not in t or stream is None:
            self.board.add_note("the residual stream and MLP are shown with the self-attention of this layer")
            return
        h, resid = np.asarray(t[h_key], dtype=np.float64), np.asarray(t[r_key], dtype=np.float64)
        Tq, D = h.shape
        pre = t.meta.get("config", {}).get("norm", "pre") == "pre"
        cross = t.has_cross and part == "self"
        after = "cross-attention + MLP" if cross else "MLP"
        if pre:
            self.board.add_note(f"Block (pre-LN): h = X + attention(LN(X)); then resid = h + {after}(LN(h))", 1.4)
            tail = [self._grid("mlp", resid - h, f"{after}(LN(h))", subtitle=f"{Tq} × {D}", highlight_rows=hl), "="]
            first = [self._stream_grid(stream, q_tok, hl), "+", self._out_grid(f), "=",
                     self._grid("h", h, "h", subtitle=f"{Tq} × {D}", highlight_rows=hl), "+"]
        else:
            self.board.add_note(f"Block (post-LN, as in the original transformer): h = LayerNorm(X + attention(X)); "
                                f"resid = LayerNorm(h + {after}(h))", 1.4)
            first = [self._stream_grid(stream, q_tok, hl), "+", self._out_grid(f), "→ LayerNorm →",
                     self._grid("h", h, "h", subtitle=f"{Tq} × {D}", highlight_rows=hl)]
            tail = [f"→ {after}, + h, LayerNorm →"]
        last = self._grid("resid", resid, f"resid (L{layer}.resid)", subtitle=f"{Tq} × {D}", highlight_rows=hl)
        self.board.add_row(first + tail + [last], stretch=3)

    def _stream_grid(self, stream, q_tok, hl) -> MatrixGrid:
        Tq, D = stream.shape
        return self._grid("stream", stream, "X (residual in)", subtitle=f"{Tq} × {D}", row_labels=q_tok,
                          highlight_rows=hl)

    def _out_grid(self, f) -> MatrixGrid:
        return self._grid("out2", f.out, "attention out", subtitle=f"{f.out.shape[0]} × {f.out.shape[1]}")
