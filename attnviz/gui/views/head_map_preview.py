"""The head map while a forward runs: the selected layer's preview (short: its probabilities; long: pooled from
q, k and lse on the views' lane, as a long trace's map) and the mark on the last input's map meanwhile.

Functions of :class:`~attnviz.gui.views.head_map_view.HeadMapView` split from it along this seam (what it draws
before the trace arrives); the view keeps the state they set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnviz.gui.views.colour_scale import scale_note
from attnviz.gui.views.heatmap_data import block_all, block_max, pool_factor, pooled_phrase, quantize
from attnviz.text.token_display import numbered_labels

__all__ = ["PreviewSelection", "running_suffix", "draw_full_preview", "long_selection", "RUNNING_NEW_INPUT"]

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
    """The title's note that the map is a preview: which layer of how many the running forward has reached
    ("layer 13 of 30" joined by no-break spaces: at 1280×720 the title broke before a lone "of 30")."""
    return " — forward running, " + f"layer {preview.layer + 1} of {preview.n_layers}".replace(" ", "\u00a0")


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
