"""Which positions the Rollout view's token strips show when the whole row does not fit, and what its caption says.

Each strip draws every key as a coloured token box; past a few hundred tokens three strips no longer fit the figure
(at 300 tokens the first strip alone ran off a 1280×720 export, and at 2,000 or 8,192 nothing was drawn but the
title). The strips then show a window of positions around the query, as the token-lines view does, and the caption
says which positions, that the shares are still over every key, and how much of each map lies outside. Qt-free.
"""

from __future__ import annotations

import numpy as np

from attnviz.text.token_display import display_token

__all__ = ["masked_after", "strip_window", "window_caption", "MIN_WINDOW", "MAX_WINDOW"]

MIN_WINDOW = 8  # never fewer boxes than this, even in a tiny dock (they wrap instead)
MAX_WINDOW = 512  # the most boxes tried: beyond this no figure shows them legibly


def masked_after(trace, part: str, query: int) -> np.ndarray | None:
    """(Tk,) bool: the keys after ``query`` that every layer's mask hides from it (a decoder's causal mask), or None.

    Raw attention, rollout and gradient rollout are all exactly 0 there, but not because the model weighed the key
    at 0: the query cannot see it, and the strips mark it so rather than colour it as a real 0. Only keys after the
    query count: one masked before it (a sliding window) is still reached through other positions by the rollout."""
    from attnviz.analysis.trace_parts import masked_cells
    from attnviz.capture.trace import layer_prefix

    hidden = None
    for layer in range(trace.layers_in(part)):
        m = masked_cells(trace, layer_prefix(layer, part))
        if m is None or m.ndim != 2 or not 0 <= query < m.shape[0]:
            return None
        hidden = m[query] if hidden is None else hidden & m[query]
    if hidden is None:
        return None
    hidden = hidden.copy()
    hidden[: query + 1] = False
    return hidden if hidden.any() else None


def strip_window(n_keys: int, query: int, size: int) -> tuple[int, int]:
    """Positions ``[lo, hi)`` of ``size`` keys (at most ``n_keys``) around ``query``, clipped to the input.

    >>> strip_window(2000, 1999, 100), strip_window(2000, 0, 100), strip_window(2000, 1000, 100), strip_window(46, 45, 100)
    ((1900, 2000), (0, 100), (950, 1050), (0, 46))
    """
    size = max(1, min(int(size), n_keys))
    lo = min(max(int(query) - size // 2, 0), n_keys - size)
    return lo, lo + size


def window_caption(lo: int, hi: int, n_keys: int, maps: dict[str, np.ndarray | None], names: dict[str, str],
                   tokens=None) -> str:
    """One line naming the shown positions and each map's share outside them ("" when every key is shown), with
    the key outside that holds the most (a long input's rollout often sits on the first token, far from the
    window): ``tokens`` label it (display text), else its position alone."""
    if lo == 0 and hi == n_keys:
        return ""
    outside = []
    for key, values in maps.items():
        if values is None or not values.size:
            continue
        total = float(values.sum())
        rest = total - float(values[lo:hi].sum())
        if total <= 0:
            outside.append(f"{names[key]} —")
            continue
        out = np.concatenate([values[:lo], values[hi:]])
        i = int(np.argmax(out))
        i = i if i < lo else i + (hi - lo)  # back to an input position
        label = f"{display_token(tokens[i])} [{i}]" if tokens is not None else f"[{i}]"
        outside.append(f"{names[key]} {100 * rest / total:.0f} % (most on {label}: {values[i]:.2g})")
    return (f"positions {lo}–{hi - 1} of {n_keys:,} (around the query: as many as fit) are shown; the shares are "
            f"over all {n_keys:,} keys · outside the shown positions: " + ", ".join(outside))
