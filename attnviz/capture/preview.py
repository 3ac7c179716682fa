"""What a capture reports while the forward still runs: one layer's attention, made where it is computed.

Hugging Face decoders and encoders call the preview as soon as a layer's attention is computed
(:func:`attnviz.hf.capture.capture_hf`); the app shows it in the head map before the trace is complete. The
same object travels unchanged from the capture to the window. A short layer carries its (H, T, T)
probabilities; a long one (on the fastest kernel) carries only what recomputes them, q, k and each row's
log-sum-exp (O(T·d)), and the head map asks it for blocks as it asks a long trace (:class:`PreviewMaps`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LayerPreview", "PreviewMaps"]


@dataclass(frozen=True)
class LayerPreview:
    """One layer's attention during the forward.

    Attributes
    ----------
    layer : its index; n_layers : how many layers the forward computes.
    probs : (H, Tq, Tk) float32, a copy of what the model computed (nothing the forward does later changes it);
        None for a long layer, whose ``deferred`` computes any block instead.
    tokens : the labels of the positions.
    masked : (Tq, Tk) bool, the cells its mask blocked; None: no mask (or a long layer: its blocked cells are
        its exact zeros).
    deferred : an :class:`~attnviz.capture.on_demand.OnDemandProbs` over copies of the layer's q, k and lse
        (``shape`` and ``block(heads, rows, cols)``), or None when ``probs`` is given.
    """

    layer: int
    n_layers: int
    probs: np.ndarray | None
    tokens: tuple[str, ...]
    masked: np.ndarray | None = None
    deferred: object | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        """(H, Tq, Tk) of the layer's probabilities, without computing them."""
        return tuple(int(n) for n in (self.probs.shape if self.probs is not None else self.deferred.shape))


class PreviewMaps:
    """A long preview asked for blocks the way a trace is (``probs_shape``, ``probs``), so the head map's
    on-demand overview and tiles (:class:`attnviz.gui.views.on_demand_map.OnDemandMap`) draw it unchanged."""

    def __init__(self, preview: LayerPreview):
        if preview.deferred is None:
            raise ValueError("a preview with its probabilities in full has no blocks to compute")
        self.preview = preview

    def _check(self, layer: int, part: str) -> None:
        if int(layer) != self.preview.layer or part != "self":
            raise KeyError(f"the preview holds layer {self.preview.layer}'s self-attention only, "
                           f"not layer {layer} {part}")

    def probs_shape(self, layer: int, part: str = "self") -> tuple[int, int, int]:
        self._check(layer, part)
        return self.preview.shape

    def probs(self, layer: int, part: str = "self", heads=None, rows=None, cols=None) -> np.ndarray:
        """(heads, rows, cols) float32 exact probabilities of the previewed layer (as :meth:`Trace.probs`)."""
        self._check(layer, part)
        return self.preview.deferred.block(heads, rows, cols)
