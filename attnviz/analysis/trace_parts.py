"""Small helpers the views share to read a Trace: valid part/layer/head, labels, masks (no Qt)."""

from __future__ import annotations

import numpy as np

from attnviz.analysis.decoder_positions import row_labels
from attnviz.capture.trace import layer_prefix
from attnviz.selection import SelectionState

__all__ = ["part_name", "resolve", "Resolved", "masked_cells", "format_value"]


class Resolved:
    """The selection made valid for one trace: part that exists, layer/head/query/key in range."""

    def __init__(self, trace, state: SelectionState):
        part = state.part
        if part == "cross" and not trace.has_cross:
            part = "self"
        if part == "enc" and not trace.n_enc_layers:
            part = "self"
        self.part = part
        self._two_stacks = bool(trace.has_cross or trace.n_enc_layers)  # "self" is the decoder's then
        n_layers = trace.layers_in(part)
        self.n_layers = n_layers
        self.layer = min(max(state.layer, 0), n_layers - 1)
        self.head = min(max(state.head, 0), trace.n_heads - 1)
        self.prefix = layer_prefix(self.layer, part)
        _, tq, tk = trace.probs_shape(self.layer, part)  # (H, Tq, Tk), never computing a long map
        # a trace written without src_tokens still gets labels of the right length; decoder rows of
        # cross-attention are named by the token they produced ("→ un"), see analysis.decoder_positions
        self.query_tokens = _labels(row_labels(trace, part), tq)
        self.key_tokens = _labels(trace.key_tokens(part), tk)
        self.query = state.query if state.query is not None and 0 <= state.query < tq else None
        self.key = state.key if state.key is not None and 0 <= state.key < tk else None

    @property
    def part_name(self) -> str:
        return part_name(self.part, self._two_stacks)


def part_name(part: str, two_stacks: bool) -> str:
    """What an attention block is called in titles (the app, exports, the HTML page): "self" is the
    decoder's own self-attention when the model has two stacks."""
    return {"self": "decoder self-attention" if two_stacks else "self-attention",
            "cross": "cross-attention (decoder → encoder)", "enc": "encoder self-attention"}[part]


def _labels(tokens: list[str], n: int) -> list[str]:
    return list(tokens) if len(tokens) == n else [str(i) for i in range(n)]


def resolve(trace, state: SelectionState) -> Resolved:
    """The selection ``state`` made valid for ``trace``."""
    return Resolved(trace, state)


def masked_cells(trace, prefix: str) -> np.ndarray | None:
    """(Tq, Tk) bool: cells whose additive mask is −∞ (None when the block has no mask)."""
    m = trace.get(prefix + "mask")
    if m is None:
        return None
    return np.isneginf(m)


def format_value(v: float) -> str:
    """Full-precision value text for hovers: 0.123456, or 1.234e-07 for tiny values."""
    v = float(v)
    if v == 0 or abs(v) >= 1e-4:
        return f"{v:.6f}"
    return f"{v:.3e}"
