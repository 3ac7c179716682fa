"""The rows of the matrix form, one method per part of the layer: Q, K, V from X; the T×T maps; Z = P V and
the heads × W_O; the residual stream and the MLP. A mixin of
:class:`~attnviz.gui.walkthrough.matrix_form_widget.MatrixFormWidget` (its ``board``, ``grids``, ``gqa``,
``style`` and ``_grid``), kept apart so the widget file holds what is computed and when.
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.model_labels import norm_label
from attnviz.analysis.steps_inputs import position_rows
from attnviz.capture.trace import layer_prefix
from attnviz.gui.style import head_colour
from attnviz.gui.walkthrough.figure import group_rows
from attnviz.gui.walkthrough.maps_row import WrappingMapsRow

__all__ = ["MatrixFormRows", "GQA_BESIDE", "SQUARE_SIDE", "PRESENTED_SIDE", "PRESENTED_OP_FACTOR"]

GQA_BESIDE = 8  # up to this many query heads the GQA diagram stands beside Q, K, V; more get a row of their own
# px asked for each side of a T×T map in the one-head part: export lays a 1920×1080 slide out at
# 1067×600 and scales it ×1.8, so 180 here is 324 px on the slide (and 180 px in a window)
SQUARE_SIDE = 180
# px asked for in presentation mode (large type, shown 1:1 on the projector): a slide's 300 px and a margin
PRESENTED_SIDE = 320
PRESENTED_OP_FACTOR = 1.25  # presenting: a row's operators at most the size of the grids' titles
LABEL_COLUMNS = 5  # about the width of a grid's token names, in cells, when a row's widths go by columns


def _stream_in(trace, layer: int, part: str, a: int, b: int) -> np.ndarray | None:
    """Rows [a, b) of the residual stream entering the block (float64): the embeddings for layer 0, else the
    previous block's output."""
    base = "enc." if part == "enc" else ""
    key = f"{base}emb.sum" if layer == 0 else f"{base}L{layer - 1}.resid"
    return position_rows(trace, key, a, b) if key in trace else None


def _has(trace, key: str) -> bool:
    """Whether the model has this bias: its config says so (native models), else a nonzero entry."""
    if key not in trace:
        return False
    declared = trace.description.config.get("attn_bias")
    return bool(declared) if declared is not None else bool(np.any(np.asarray(trace[key])))


class MatrixFormRows:
    """The rows each part of the matrix form adds to the board (mixed into MatrixFormWidget)."""

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
        maps = [self._grid("QK", f.QK[head], "Q Kᵀ", subtitle=f"{Tq} × {Tk}", **square)]
        if masked:
            ops = [f"× {f.scale:.4g}" + (f", cap {f.softcap:g}" if f.softcap else "")
                   + (" + B" if f.bias is not None else "") + " + M ="]
            maps.append(self._grid("masked", f.masked[head], ("capped" if f.softcap else "scaled")
                                   + (" + B" if f.bias is not None else "") + " + M", subtitle=f"{Tq} × {Tk}",
                                   **square))
        else:
            ops = [f"× {f.scale:.4g} ="]
            maps.append(self._grid("scaled", f.scaled[head], "scaled", subtitle=f"{Tq} × {Tk}", **square))
        # operators on one line ("× 0.25 =", "softmax →"): square cells leave them the width
        ops.append("softmax →")
        maps.append(self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", **square))
        # one line when the figure is wide enough for every column named, else P under the scaled map (a
        # 1280×720 dock scrolled sideways); the maps keep equal widths either way and take the spare height
        self.maps_row = self._wrapping_row(maps, ops, stretch=1, op_factor=1.0)
        self._modest(first)

    def _output_rows(self, c: "_Context") -> None:
        """P V = Z for the selected head, then every head's Z concatenated × W_O (+ b_O) = A."""
        f, head = c.f, c.head
        Tq, Tk, dh = f.X.shape[0], f.K.shape[1], f.Q.shape[2]
        # widths by columns (P's Tk, V's and Z's d_head, each with about LABEL_COLUMNS of room for its token
        # names): P's cells square, V's and Z's as wide, so P V = Z reads at one scale (asked by size, P took 4/10
        # of the row and was drawn 297 × 205)
        lab = LABEL_COLUMNS
        self.board.add_row([
            (self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", row_labels=c.q_tok,
                        col_labels=c.k_tok, highlight_rows=c.hl, min_side=self._square_side()), Tk + lab), "×",
            (self._grid("V", f.V[head], self._formula(c, "V"), subtitle=f"{Tk} × {dh}", row_labels=c.k_tok),
             dh + lab), "=",
            (self._grid("Z", f.Z[head], f"Z = P V  (head {head})", subtitle=f"{Tq} × {dh}", row_labels=c.q_tok,
                        highlight_rows=c.hl, frame_colour=head_colour(head)), dh + lab),
        ], stretch=3, op_factor=1.5, equal=True)
        # V's and Z's d_head columns equally wide: the wider of their least widths for both (Z's title, at a
        # slide's type, asked 5 px more than its share and drew its columns 3 % wider than V's)
        v, z = self.grids["V"], self.grids["Z"]
        least = max(v.minimumSizeHint().width(), z.minimumSizeHint().width())
        v.setMinimumWidth(least)
        z.setMinimumWidth(least)
        # concat(Z) W_O (+ b_O) = A to scale, by the many-heads figure's one column unit (as grids each took a
        # share of the row's width: the same 64 columns at three widths and a 64 × 64 W_O drawn 238 × 200). On a
        # slide or a desk as tall as its token names at full size need, the rest is P V = Z's (at a share of the
        # height a 1920 slide named them in 12.7 px type beside P V = Z's 23.8, the strip 150 px wide);
        # presenting, P keeps its 300 px first
        presenting = self.style.font_scale > 1
        self._concat_figure(c, patterns=False, stretch=1 if presenting else 0, rows_at_line=not presenting)
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
        maps = [self._grid("QK", f.QK[head], "Q Kᵀ", subtitle=f"{Tq} × {Tk}", **square),
                self._grid("scaled", f.scaled[head], "scaled", subtitle=f"{Tq} × {Tk}", **square)]
        ops = [f"× {f.scale:.4g}"]
        if np.isneginf(f.mask).any():
            ops.append("+ M")
            maps.append(self._grid("masked", f.masked[head], "masked", subtitle=f"{Tq} × {Tk}", **square))
        ops += ["softmax", "V ="]
        maps += [self._grid("P", f.P[head], "P", subtitle=f"{Tq} × {Tk}", kind="prob", **square),
                 self._grid("Z", f.Z[head], "Z = P V", subtitle=f"{Tq} × {dh}", row_labels=c.q_tok,
                            highlight_rows=c.hl, frame_colour=head_colour(head))]
        # as many maps a line as fit with every column named (a 1280×720 dock scrolled sideways by 55–900 px)
        self.maps_row = self._wrapping_row(maps, ops, stretch=6)

    def _concat_row(self, c: "_Context", H: int, dh: int) -> None:
        """All heads' Z concatenated × W_O = A, to scale (one column unit), each head's pattern above its Z."""
        f = c.f
        Tq, D = f.X.shape
        b_o = _has(c.t, c.prefix + "b_o")
        self.board.add_note(f"Multi-head: the {H} heads' Z side by side ({Tq} × {H}·{dh} = {Tq} × {H * dh}), "
                            f"times W_O ({H * dh} × {D})" + (" plus b_O" if b_o else "") + " = A, to scale (a column is "
                            "as wide in every matrix)",
                            factor=1.2)
        self._concat_figure(c, patterns=True)

    def _concat_figure(self, c: "_Context", patterns: bool, stretch: int = 4, rows_at_line: bool = False) -> None:
        """A row with concat(Z) × W_O (+ b_O) = A drawn to scale; ``patterns``: each head's P above its Z."""
        from attnviz.gui.walkthrough.concat_figure import ConcatFigure

        f = c.f
        Tq, H, dh = f.X.shape[0], f.Q.shape[0], f.Q.shape[2]
        gate = f.concat.reshape(Tq, H, dh).transpose(1, 0, 2)  # (H, Tq, dh) as concatenated
        ablated = [h for h in range(H) if not np.array_equal(gate[h], f.Z[h])]
        self.concat_figure = ConcatFigure(self.style)
        self.concat_figure.rows_at_line = rows_at_line
        self.concat_figure.set_data(gate, f.W_O, f.out, c.q_tok, P=f.P if patterns and f.P.ndim == 3 else None,
                                    b_O=f.b_O if _has(c.t, c.prefix + "b_o") else None, selected=c.head,
                                    query=c.hl[0] if c.hl else None, ablated=ablated)
        self.board.add_row([self.concat_figure], stretch=stretch)

    def _multi_head_rows(self, c: "_Context", H: int, dh: int) -> None:
        """The overview's heads row: concat(Z) × W_O (+ b_O) = A by the many-heads figure's one column unit, as the
        "one head: Z = P V → A" part draws it (separate grids each took a share of the row: Z_0 with its row labels
        inside its box narrower than Z_1 …, W_O and A at widths of their own)."""
        f = c.f
        Tq, D = f.X.shape
        b_o = _has(c.t, c.prefix + "b_o")
        self.board.add_note(f"Multi-head: the {H} heads' Z side by side ({Tq} × {H}·{dh} = {Tq} × {H * dh}), "
                            f"times W_O ({H * dh} × {D})" + (" plus b_O" if b_o else "") + " = A", factor=1.4)
        self._concat_figure(c, patterns=False, stretch=4)

    def _block_rows(self, c: "_Context", large: bool) -> None:
        t, f, layer, part, q_tok, hl = c.t, c.f, c.layer, c.part, c.q_tok, c.hl
        base = "enc." if part == "enc" else ""
        h_key, r_key = f"{base}L{layer}.h", f"{base}L{layer}.resid"
        a, b = f.rows or (0, f.X.shape[0])  # a long input: the window's rows
        stream = _stream_in(t, layer, part, a, b)
        if part == "cross" or h_key not in t or stream is None:
            self.board.add_note("the residual stream and MLP are shown with the self-attention of this layer")
            return
        # the window's rows alone: a long trace's h is a rule over the stream and z, computed for these rows
        h, resid = position_rows(t, h_key, a, b), position_rows(t, r_key, a, b)
        Tq, D = h.shape
        pre = t.description.norm_placement == "pre"
        ln = norm_label(t.description)
        cross = t.has_cross and part == "self"
        after = "cross-attention + MLP" if cross else "MLP"
        labels = q_tok if large else None
        sub = f"{Tq} × {D}"
        stream_grid = self._grid("stream", stream, "R (residual stream in)", subtitle=sub, row_labels=q_tok,
                                 highlight_rows=hl)
        out_grid = self._grid("out2", f.out, "A (attention output)", subtitle=sub, row_labels=labels,
                              highlight_rows=hl)
        # named by what they are in the lecture's block, not by the trace's keys (a class read "R_mid (L17.h)")
        mid_title = "R_mid = R + A" if pre else f"R_mid = {ln}(R + A)"
        # as short as "R_mid = R + A": a 1280×720 window's third of a row wrapped "R_out (next block's R)"
        out_title = f"R_out → layer {layer + 1}" if layer + 1 < t.layers_in(part) else "R_out (last layer)"
        mid = self._grid("h", h, mid_title, subtitle=sub, row_labels=labels, highlight_rows=hl)
        last = self._grid("resid", resid, out_title, subtitle=sub, row_labels=labels, highlight_rows=hl)
        if pre:
            self.board.add_note(f"Block (pre-{ln}): X = {ln}(R);  R_mid = R + A;  R_out = R_mid + {after}({ln}(R_mid)), "
                                "the next block's R", 1.4)
            mlp = self._grid("mlp", resid - h, f"{after}({ln}(R_mid))", subtitle=sub, row_labels=labels,
                             highlight_rows=hl)
            if large:  # two rows: each addition gets the width of the slide
                self.board.add_row([stream_grid, "+", out_grid, "=", mid], stretch=3)
                self.board.add_row([self._grid("h2", h, "R_mid", subtitle=sub, row_labels=q_tok, highlight_rows=hl),
                                    "+", mlp, "=", last], stretch=3)
            else:  # the overview: one line when it fits, else wrapped (1,050 px at 12 tokens scrolled sideways)
                self._wrapping_row([stream_grid, out_grid, mid, mlp, last], ["+", "=", "+", "="], stretch=3)
        else:
            self.board.add_note(f"Block (post-{ln}, as in the original transformer): X = R;  "
                                f"R_mid = {ln}(R + A);  R_out = {ln}(R_mid + {after}(R_mid))", 1.4)
            self._wrapping_row([stream_grid, out_grid, mid, last], ["+", f"→ {ln} →", f"→ + {after}, {ln} →"], stretch=3)

    def _wrapping_row(self, maps: list, ops: list[str], stretch: int, op_factor: float = 2.0):
        """Grids of one shape with operators between them, on as many lines as the figure's width needs."""
        if self.style.font_scale > 1:
            # presenting, an operator is as large as the grids' titles (MatrixGrid's 1.25): at 2.0 the overview's
            # "× 0.5" and "softmax" were 36-px type beside 12-px row names and took the maps' width (issue 36)
            op_factor = min(op_factor, PRESENTED_OP_FACTOR)
        row = WrappingMapsRow(maps, [self.board.label(op, op_factor, bold=True) for op in ops])
        group_rows(maps)
        self.board.add_row([row], stretch=stretch)
        return row


class _Context:
    """What every row of one drawing needs (trace, form, where, labels)."""

    def __init__(self, t, f, layer, part, head, q_tok, k_tok, hl):
        self.t, self.f, self.layer, self.part, self.head = t, f, layer, part, head
        self.q_tok, self.k_tok, self.hl = q_tok, k_tok, hl
        self.prefix = layer_prefix(layer, part)
