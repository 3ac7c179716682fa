"""The what-if figure: predictions before/after, the selected head's attention, entropies, permutation."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QWidget

from attnviz.analysis.permutation import permutation_matrix
from attnviz.analysis.trace_parts import masked_cells, part_name
from attnviz.capture.trace import layer_prefix
from attnviz.gui.walkthrough.figure import group_rows
from attnviz.gui.walkthrough.maps_row import WrappingMapsRow
from attnviz.gui.walkthrough.matrix_grid import MatrixGrid
from attnviz.gui.walkthrough.number_format import format_number
from attnviz.gui.walkthrough.whatif_layout import TABLE_ZOOM, OneLineHeading, presenting, tables_beside_maps
from attnviz.whatif import shown_head

__all__ = ["draw_comparison", "draw_permutation", "ablation_note"]


def _labels(trace, n: int) -> list[str]:
    toks = list(trace.tokens)
    return toks if len(toks) == n else [str(i) for i in range(n)]


def _top(panel, name: str, top: list[tuple[str, float]], title: str, stacked: bool):
    labels = [lbl if lbl.strip() else repr(lbl) for lbl, _ in top]
    return _grid(panel, name, np.array([[p] for _, p in top]), title, stacked, row_labels=labels, col_labels=["p"],
                 kind="prob", subtitle=f"top {len(top)}")


def _masked(trace, layer: int, shape) -> np.ndarray | None:
    """The (Tq, Tk) cells ``layer`` masks, when its mask has the map's shape (a switched run of another length)."""
    m = masked_cells(trace, layer_prefix(layer))
    return m if m is not None and m.shape == tuple(shape) else None


def ablation_note(c, layer: int, head: int) -> str:
    """What switching heads off did: the shown head's output is zeroed, its pattern is still computed;
    the head whose attention moved most (max |ΔP|) is named, when the two runs have the same positions."""
    heads = ", ".join(f"L{a} h{b}" for a, b in sorted(c.whatif.ablate))
    text = f"{heads} switched off: the output z is zeroed, the weights are still computed (so the map can look alike)"
    b_tr, a_tr = c.before, c.after
    if len(b_tr.tokens) != len(a_tr.tokens):
        return text
    moved = np.stack([np.abs(a_tr.probs(i) - b_tr.probs(i)).max(axis=(-2, -1)) for i in range(b_tr.n_layers)])
    li, hi = (int(x) for x in np.unravel_index(int(np.argmax(moved)), moved.shape))
    if moved[li, hi] <= 1e-6:
        return text + "; no head's attention changed (the ablated heads are in the last layer, or unused)"
    return text + f"; the attention that moved most: L{li} h{hi} (max |ΔP| = {moved[li, hi]:.2f})"


class _StackedGrid(MatrixGrid):
    """A grid whose subtitle ("decoder self-attention · 10 × 10", "top 3") always stands under its title. Beside
    "as trained · L1 h0" it fitted on the title's line while "switched off (z = 0) · L1 h0" stacked it, and the two
    maps, sharing their rows, drew one 15 px shorter and the other's cells out of square; on a slide "switched  top 3"
    (its table widened by a long token) stood on one line above "as trained / top 3"."""

    def _subtitle_below(self) -> bool:
        return bool(self.subtitle) and self.width() > 0


def _grid(panel, name: str, values, title: str, stacked: bool = True, **kw) -> MatrixGrid:
    """A grid of the figure (``stacked``: its subtitle always under its title)."""
    grid = (_StackedGrid if stacked else MatrixGrid)(name, panel.style)
    grid.set_data(values, title=title, **kw)
    panel._adopt(grid)
    return grid


def _pair(board, grids: list) -> QWidget:
    """Two grids of one shape with "→" between them, each as wide as the wider one needs at least (a grid's
    minimum covers its title: "entropy, switched" asked for more than "entropy", which then lost its numbers)."""
    low = max(g.minimumSizeHint().width() for g in grids)
    pair = QWidget()
    row = QHBoxLayout(pair)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(12)
    arrow = board.label("→", 2.0, bold=True)
    arrow.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Preferred)
    arrow.setMinimumWidth(arrow.sizeHint().width())
    for i, g in enumerate(grids):
        g.setMinimumWidth(low)
        if i:
            row.addWidget(arrow, 0, Qt.AlignVCenter)
        row.addWidget(g, 1)
    return pair


def draw_comparison(panel, c, layer: int, head: int, more_notes: list[str] = ()) -> None:
    """Predictions, the selected head's attention and the entropies, as trained and with the switches; the notes
    under them end with ``more_notes``."""
    board = panel.board
    wi = c.whatif
    old, new = c.top_before[0][0], c.top_after[0][0]
    # the position compared is named in the same sentence as the verdict: a translation's prediction
    # depends on which decoder position is read, and the Prediction panel may show another one
    what = "class" if c.read_at is None else "prediction"  # a classifier's one answer is a class
    verdict = (f"{c.where}, the {what} changes: {old!r} → {new!r}" if c.argmax_changed
               else f"{c.where}, the top {what} stays {old!r}")
    heading = board.add_heading(f"What if: {wi.describe()}",
                                f"{verdict[0].upper()}{verdict[1:]} · the output distribution moved by "
                                f"{format_number(c.changed, 3)} (total variation, 0 = same, 1 = disjoint)")
    # predictions and entropies share the first row: small tables, so the attention maps below get
    # the height of the slide (stacked in three rows they were a few pixels per token in presentation)
    T = c.before.probs(0).shape[-1]
    top = math.log(T)  # the entropy of a uniform row: the colour scale's honest top
    slide = presenting(panel)  # F5: the tables stand beside the maps (whatif_layout)
    if slide:
        OneLineHeading(board, heading)
    # a slide's rows closer together: the 1280×720 slide's height went to the maps' title lines, not to the maps
    board.layout().setSpacing(6 if slide else 10)
    board.layout().setContentsMargins(*((8, 4, 8, 4) if slide else (14, 10, 14, 10)))
    # on a slide the run is said under "entropy" (the table as narrow as its numbers; the top, ln T, is on its
    # colour bar): "entropy, as trained" made the column 250 px wide for two heads' numbers (~130), width the
    # maps beside it need
    ent = [_grid(panel, name, e, "entropy" if slide else f"entropy, {run}", slide, kind="prob", vmax=top,
                 row_labels=[f"L{i}" for i in range(e.shape[0])], col_labels=[f"h{h}" for h in range(e.shape[1])],
                 subtitle=f"{run} · nats" if slide else f"nats, ≤ {top:.2f}")
           for name, e, run in (("H_before", c.entropy_before, "as trained"), ("H_after", c.entropy_after, "switched"))]
    # on a slide the top 3: two tables of five, one above the other, were taller than the maps beside them
    k = 3 if slide else len(c.top_before)
    tops = [_top(panel, "top_before", c.top_before[:k], "as trained", slide),
            _top(panel, "top_after", c.top_after[:k], "switched", slide)]
    # two pairs side by side, or the entropies under the predictions when the figure is narrow (a 1280×720
    # window: the four in one line squeezed "entropy" below its numbers while "entropy, switched" showed them)
    panel.first_row = None if slide else WrappingMapsRow([_pair(board, tops), _pair(board, ent)], [board.label("   ")])
    if not slide:
        board.add_row([panel.first_row], stretch=3)
    n_layers, n_heads = c.before.n_layers, c.before.n_heads
    layer, head = shown_head(wi, min(layer, n_layers - 1), min(head, n_heads - 1))
    off = (layer, head) in wi.ablate
    # the switches act on the main stack's self-attention (translate's decoder, not its cross-attention): said
    # under each title, or "attention · L1 h1" reads as whichever part the walkthrough shows
    part = part_name("self", bool(c.before.has_cross or c.before.n_enc_layers))
    maps = []
    for name, tr, title in (("P_before", c.before, "as trained"), ("P_after", c.after, "with the switches")):
        p = tr.probs(layer)[head]
        labels = _labels(tr, p.shape[-1])
        if name == "P_after" and off:  # its weights are still computed, but z = 0: nothing of it reaches the output
            title = "switched off (z = 0)"
        # the row whose output the verdict compares is boxed, as the walkthrough boxes its query
        rows = (c.read_at,) if c.read_at is not None and c.read_at < p.shape[0] else ()
        maps.append(_grid(panel, name, p, f"{title} · L{layer} h{head}", kind="prob",
                          row_labels=labels, col_labels=labels, min_side=300,
                          masked=_masked(tr, layer, p.shape), highlight_rows=rows,
                          subtitle=f"{part} · {p.shape[0]} × {p.shape[1]}",
                          frame_colour="#CC3311" if name == "P_after" and off else None))
    # side by side, or one above the other when a 1280×720 dock is narrower than two maps with every token
    # named (21 tokens scrolled sideways by 103 px)
    panel.maps_row = WrappingMapsRow(maps, [board.label("→" if slide else "   ", 2.0, bold=True)])
    group_rows(maps)
    board.add_row([tables_beside_maps(panel.maps_row, tops, ent, 1.0 if getattr(panel, "export_as_slide", False)
                                      else TABLE_ZOOM) if slide else panel.maps_row], stretch=8)
    notes = [ablation_note(c, layer, head)] if wi.ablate else []
    if c.before.kind == "encoder-decoder" and list(c.after.tokens) == list(c.before.tokens):
        # said, or a student expects the switched map to show the switched model's own translation
        notes.append(f"Both decoders read the trained output “{c.before.description.output_text}”: "
                     "a row is the same prefix in both runs.")
    mean_b, mean_a = float(c.entropy_before.mean()), float(c.entropy_after.mean())
    trend = "sharper: the softmax saturates" if mean_a < 0.95 * mean_b else \
        "flatter" if mean_a > 1.05 * mean_b else "about as sharp as before"
    notes.append(f"mean attention entropy {mean_b:.3f} → {mean_a:.3f} nats: attention is {trend}")
    notes += list(more_notes)
    # on a slide one paragraph: three notes, each starting a line, took ~45 px of the maps' height
    for note in ([" · ".join(notes)] if slide else notes):
        board.add_note(note, 1.0 if slide else 1.2)


def draw_permutation(panel, r, layer: int, head: int) -> None:
    """P(RX) next to R·P(X)·Rᵀ and their difference, for the selected head."""
    board = panel.board
    layer = min(layer, len(r.probs_perm) - 1)
    head = min(head, r.probs_perm[0].shape[0] - 1)
    R = permutation_matrix(r.perm)
    expected = R @ r.probs_orig[layer][head] @ R.T
    got = r.probs_perm[layer][head]
    verdict = ("equivariant: shuffling the tokens shuffles the attention the same way"
               if r.equivariant else "not equivariant: positions (or the causal mask) tell the tokens apart")
    board.add_note(f"Permuted input ({r.whatif.describe()}): order {', '.join(str(int(i)) for i in r.perm)} · "
                   f"max |P(RX) − R·P(X)·Rᵀ| = {r.max_error:.1e} over all layers and heads — {verdict}", 1.3)
    labels = r.permuted_tokens
    board.add_row([
        panel._grid("P_perm", got, f"P(RX) · L{layer} h{head}", kind="prob", row_labels=labels, col_labels=labels),
        "vs",
        panel._grid("P_expected", expected, "R·P(X)·Rᵀ", kind="prob", row_labels=labels, col_labels=labels),
        "difference:",
        panel._grid("P_diff", got - expected, "P(RX) − R·P·Rᵀ", row_labels=labels, col_labels=labels,
                    vmax=max(float(np.abs(got - expected).max()), 1e-6)),
    ], stretch=5)
