"""The head map while a forward runs: the selected layer's preview (short: its probabilities; long: pooled from
q, k and lse on the views' lane, as a long trace's map) and the mark on the last input's map meanwhile.

Functions of :class:`~attnviz.gui.views.head_map_view.HeadMapView` split from it along this seam (what it draws
before the trace arrives); the view keeps the state they set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.gui.views.colour_scale import scale_note
from attnviz.gui.views.heatmap_data import block_all, block_max, pool_factor, pooled_phrase, quantize
from attnviz.text.token_display import numbered_labels

__all__ = ["PreviewSelection", "running_suffix", "draw_full_preview", "long_selection", "RUNNING_NEW_INPUT",
           "same_numbers", "computed_for"]

# said over the last input's map once a new input's forward has run for a moment (its layer not computed yet)
RUNNING_NEW_INPUT = " — the previous input's map; running the new input…"


@dataclass
class PreviewSelection:
    """A long preview's layer and head in the names the view reads of a resolved selection
    (:class:`attnviz.analysis.trace_parts.Resolved`): no query or key is selected in a preview."""

    layer: int
    head: int
    query_tokens: list = field(default_factory=list)
    key_tokens: list = field(default_factory=list)
    part: str = "self"
    part_name: str = "self-attention"
    query: int | None = None
    key: int | None = None


def running_suffix(preview) -> str:
    """The title's note that the map is a preview, drawn as soon as its layer was computed while the forward goes
    on. It names the model's layers as the title names this one (0-based): "layer 1 of 30" beside "Layer 0" read
    as two layers, and stayed on screen long after the forward had passed it. No-break spaces: at 1280×720 the
    title broke before a lone "of 30"."""
    return " — forward running, " + f"layers 0–{preview.n_layers - 1}".replace(" ", "\u00a0")


def draw_full_preview(view, preview, head: int) -> None:
    """Draw one head of a preview that carries its (H, T, T) probabilities (short inputs), pooled as the trace's
    coarsest view when long, titled as a preview."""
    probs = preview.probs
    view.heatmap.set_labels(preview.tokens, preview.tokens)
    view.vmax = 1.0
    f = pool_factor(max(probs.shape[1:]))  # a long map: one drawn cell per block, as the trace's coarsest view
    values = block_max(probs[head], f, f)
    masked = block_all(view.masked, f, f) if view.masked is not None and f > 1 else view.masked
    view.image_data = quantize(values, view.vmax, masked)
    view.heatmap.set_image(view.image_data, probs.shape[1:])
    view.heatmap.set_levels(0.0, 1.0, f"attention weight · {scale_note('fixed')}")
    view.heatmap.set_title(f"Layer {preview.layer} · head {head} · self-attention{pooled_phrase(f)}"
                           f"{running_suffix(preview)}")
    view.heatmap.set_highlight(None, None)


def long_selection(preview, head: int) -> PreviewSelection:
    """The stand-in selection of a long preview (axes name each token's position, as a long trace's)."""
    labels = numbered_labels(preview.tokens)
    return PreviewSelection(preview.layer, head, labels, labels)


def _same(a, b) -> bool:
    """Equal arrays of one dtype (both None counts): a float16 q read as float32 gives other weights."""
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))


def same_numbers(preview, trace, layer: int, part: str) -> bool:
    """Whether ``trace`` computes layer ``layer``'s ``part`` from exactly what the long ``preview`` computed from:
    the same q, k and log-sum-exp (values and dtypes: a trace stored in float16 does not) under the same score
    rule, by the same recomputation. Then every block of one is the other's, bit for bit."""
    from attnviz.capture.trace import layer_prefix

    mine = preview.deferred
    theirs = trace.deferred.get(layer_prefix(layer, part) + "probs") if hasattr(trace, "deferred") else None
    if mine is None or part != "self" or int(layer) != preview.layer or type(theirs) is not type(mine):
        return False
    if tuple(theirs.shape) != tuple(mine.shape) or mine.rule.facts() != theirs.rule.facts():
        return False
    rules = [(getattr(mine.rule, n), getattr(theirs.rule, n)) for n in type(mine.rule).ARRAYS]
    return all(_same(a, b) for a, b in [(mine.q, theirs.q), (mine.k, theirs.k), (mine.lse, theirs.lse), *rules])


def computed_for(od, preview, trace, layer: int, part: str, head: int):
    """``od`` (the long preview's map on screen) when the trace's map of ``layer``, ``part``, ``head`` is the very
    same numbers (:func:`same_numbers`): its overview and tiles are handed over, not computed again; else None
    (another head or layer, or numbers that differ: recomputed, never shown as the trace's)."""
    if od is None or preview is None or (od.layer, od.part, od.head) != (int(layer), part, int(head)):
        return None
    return od if same_numbers(preview, trace, layer, part) else None
