"""The what-if figure: predictions before/after, the selected head's attention, entropies, permutation."""

from __future__ import annotations

import math

import numpy as np

from attnviz.analysis.permutation import permutation_matrix
from attnviz.gui.walkthrough.number_format import format_number

__all__ = ["draw_comparison", "draw_permutation"]


def _labels(trace, n: int) -> list[str]:
    toks = list(trace.tokens)
    return toks if len(toks) == n else [str(i) for i in range(n)]


def _top(panel, name: str, top: list[tuple[str, float]], title: str):
    labels = [lbl if lbl.strip() else repr(lbl) for lbl, _ in top]
    return panel._grid(name, np.array([[p] for _, p in top]), title, row_labels=labels, col_labels=["p"],
                       kind="prob", subtitle=f"top {len(top)}")


def draw_comparison(panel, c, layer: int, head: int) -> None:
    """Predictions, the selected head's attention and the entropies, as trained and with the switches."""
    board = panel.board
    wi = c.whatif
    old, new = c.top_before[0][0], c.top_after[0][0]
    verdict = (f"the prediction changes: {old!r} → {new!r}" if c.argmax_changed
               else f"the top prediction stays {old!r}")
    board.add_heading(f"What if: {wi.describe()}",
                      f"{verdict} · the output distribution moved by {format_number(c.changed, 3)} "
                      f"(total variation, 0 = same, 1 = disjoint), compared {c.where}")
    # predictions and entropies share the first row: small tables, so the attention maps below get
    # the height of the slide (stacked in three rows they were a few pixels per token in presentation)
    T = c.before.probs(0).shape[-1]
    top = math.log(T)  # the entropy of a uniform row: the colour scale's honest top
    ent = [panel._grid(name, e, title, kind="prob", vmax=top,
                       row_labels=[f"L{i}" for i in range(e.shape[0])], col_labels=[f"h{h}" for h in range(e.shape[1])],
                       subtitle=f"nats, ≤ {top:.2f}")
           for name, e, title in (("H_before", c.entropy_before, "entropy"),
                                  ("H_after", c.entropy_after, "entropy, switched"))]
    board.add_row([_top(panel, "top_before", c.top_before, "as trained"), "→",
                   _top(panel, "top_after", c.top_after, "switched"), ent[0], "→", ent[1]], stretch=3)
    n_layers, n_heads = c.before.n_layers, c.before.n_heads
    layer, head = min(layer, n_layers - 1), min(head, n_heads - 1)
    row = []
    for name, tr, title in (("P_before", c.before, "attention as trained"), ("P_after", c.after, "with the switches")):
        p = tr.probs(layer)[head]
        labels = _labels(tr, p.shape[-1])
        row.append((panel._grid(name, p, f"{title} · L{layer} h{head}", kind="prob", row_labels=labels,
                                col_labels=labels, min_side=300), 2))
        row.append("   ")
    board.add_row(row[:-1], stretch=8)
    mean_b, mean_a = float(c.entropy_before.mean()), float(c.entropy_after.mean())
    trend = "sharper: the softmax saturates" if mean_a < 0.95 * mean_b else \
        "flatter" if mean_a > 1.05 * mean_b else "about as sharp as before"
    board.add_note(f"mean attention entropy {mean_b:.3f} → {mean_a:.3f} nats: attention is {trend}")


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
