"""What an interactive HTML figure holds: the attention of a Trace, stored compactly, within a size budget.

Qt-free (numpy and zlib only): the page needs no renderer, only the numbers and the app's colours.

Every attention map of the parts shown (self; encoder and cross-attention of encoder–decoders) goes
into one byte string, deflate-compressed and base64-encoded into the page, decoded in the browser:

- ``fp16``: each weight as IEEE half precision (relative error ≤ 2⁻¹¹, a hover shows that value), each
  layer's high bytes before its low bytes;
- ``uint8``: each map quantised to 0..255 of its own maximum, the maximum recorded (error ≤ max/510).

``auto`` takes fp16 while the maps fit :data:`FP16_BUDGET` bytes, else uint8. Past
:data:`MAX_BYTES` (uint8), layers are left out from the end, then tokens (a map of the first tokens
only), and the page says so ("showing layers 0–3 of 24"): a huge input never makes a huge file.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field

import numpy as np

from attnviz.analysis.decoder_positions import row_labels
from attnviz.analysis.trace_parts import part_name
from attnviz.capture.trace import layer_prefix
from attnviz.errors import InputError

__all__ = ["HtmlData", "build_html_data", "stored_values", "decoded_values", "PRECISIONS", "FP16_BUDGET", "MAX_BYTES",
           "MAX_LINE_TOKENS"]

PRECISIONS = ("auto", "fp16", "uint8")
FP16_BUDGET = 8 * 2**20  # raw bytes of fp16 maps still stored as fp16 by "auto" (6×12 heads at ~240 tokens)
MAX_BYTES = 24 * 2**20  # raw bytes of all maps at most (6×12 heads of 577 tokens in uint8): the file stays ≤ ~32 MB
# the app's token-lines limit (gui/views/token_lines_item.MAX_TOKENS; a test checks they agree): beyond it
# the lines are an unreadable solid block, so the page draws the first tokens' lines, as the app does
MAX_LINE_TOKENS = 200


@dataclass
class HtmlData:
    """The page's data: ``meta`` goes in as JSON, ``blob`` (compressed, base64) holds the maps."""

    meta: dict
    blob: str
    raw_bytes: int
    notices: list[str] = field(default_factory=list)


def _labels(tokens, n: int) -> list[str]:
    tokens = [str(t) for t in tokens]
    return tokens if len(tokens) == n else [str(i) for i in range(n)]


def stored_values(probs: np.ndarray, precision: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The weights as the page stores them: (stored array, per-map maxima for uint8 else None).

    ``probs`` is (..., Tq, Tk); uint8 maps are scaled by their own maximum (``round(p / max · 255)``).
    """
    probs = np.asarray(probs, dtype=np.float32)
    if precision == "fp16":
        return probs.astype("<f2"), None
    top = probs.max(axis=(-2, -1))  # (...,) one maximum per map
    safe = np.where(top > 0, top, 1.0).astype(np.float32)
    q = np.rint(np.clip(probs / safe[..., None, None], 0.0, 1.0) * np.float32(255.0)).astype(np.uint8)
    return q, top.astype(np.float32)


def _planes(stored: np.ndarray) -> bytes:
    """fp16 as two byte planes (all high bytes, then all low bytes): the high bytes (sign, exponent) of
    attention weights repeat, and deflate packs them ~15 % tighter apart from the noisy low bytes."""
    if stored.dtype.itemsize == 1:
        return stored.tobytes()
    pairs = np.ascontiguousarray(stored, dtype="<f2").view(np.uint8).reshape(-1, 2)  # (n, [low, high])
    return pairs[:, 1].tobytes() + pairs[:, 0].tobytes()


def decoded_values(stored: np.ndarray, top: np.ndarray | None) -> np.ndarray:
    """What the page shows for stored weights (float64), the inverse of :func:`stored_values`."""
    if top is None:
        return stored.astype(np.float64)
    return stored.astype(np.float64) / 255.0 * top.astype(np.float64)[..., None, None]


def _has_masked(trace, prefix: str) -> bool:
    mask = trace.get(prefix + "mask")
    return mask is not None and bool(np.isneginf(np.asarray(mask)).any())


def _mb(n: int) -> str:
    return f"{n / 2**20:.3g} MB"


def _plan(trace, parts: list[str], precision: str, max_bytes: int):
    """(precision, layers kept per part, tokens kept) within the budget, and the notices saying what was cut."""
    shapes = {p: trace.shape(layer_prefix(0, p) + "probs") for p in parts}  # (H, Tq, Tk)
    n_layers = {p: trace.layers_in(p) for p in parts}
    masks = {p: int(_has_masked(trace, layer_prefix(0, p))) for p in parts}  # a byte per cell when masked

    def size(item: int, layers: dict, t: int | None = None) -> int:
        return sum(layers[p] * (h * item + masks[p]) * min(tq, t or tq) * min(tk, t or tk)
                   for p, (h, tq, tk) in shapes.items())

    if precision == "auto":
        precision = "fp16" if size(2, n_layers) <= FP16_BUDGET else "uint8"
    item = 2 if precision == "fp16" else 1
    notices, keep, tokens = [], dict(n_layers), None
    while size(item, keep) > max_bytes and max(keep.values()) > 1:
        top = max(keep, key=keep.get)
        keep[top] -= 1
    if size(item, keep) > max_bytes:  # one layer of each part is still too large: the first tokens only
        longest = max(max(tq, tk) for _, tq, tk in shapes.values())
        tokens = longest
        while tokens > 8 and size(item, keep, tokens) > max_bytes:
            tokens = int(tokens * 0.9)
        notices.append(f"showing tokens 0–{tokens - 1} of {longest}: the whole map would not fit in "
                       f"{_mb(max_bytes)}")
    return precision, keep, tokens, notices


def build_html_data(trace, part: str | None = None, precision: str = "auto", max_bytes: int = MAX_BYTES,
                    first_layer: int = 0) -> HtmlData:
    """The attention maps of ``trace`` for the interactive page.

    Parameters
    ----------
    part : only this part ("self", "cross", "enc"); None: every part the trace has.
    precision : "auto", "fp16" or "uint8" (see the module docstring).
    max_bytes : raw size of the stored maps at most; beyond it layers, then tokens, are left out.
    first_layer : the first layer stored when not all fit (the page says which are shown).
    """
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}: choose {', '.join(PRECISIONS)}")
    if part is not None:
        trace.check_selection(part, first_layer, 0)  # e.g. cross-attention of an encoder: one line
        parts = [part]
    else:
        parts = list(trace.parts)
    precision, keep, tokens, notices = _plan(trace, parts, precision, max_bytes)
    chunks, offset, meta_parts = [], 0, []
    for p in parts:
        h, tq, tk = trace.shape(layer_prefix(0, p) + "probs")
        nq, nk = min(tq, tokens or tq), min(tk, tokens or tk)
        start = min(first_layer, max(0, trace.layers_in(p) - keep[p]))
        layers = list(range(start, start + keep[p]))
        if keep[p] < trace.layers_in(p):
            notices.append(f"showing layers {start}–{layers[-1]} of {trace.layers_in(p)} ({part_name(p, bool(trace.has_cross or trace.n_enc_layers))}): all "
                           f"layers would not fit in {_mb(max_bytes)}; export another range with --layer (layer= in Python)")
        entries = []
        for layer in layers:
            prefix = layer_prefix(layer, p)
            probs = np.asarray(trace[prefix + "probs"])[:, :nq, :nk]  # (H, nq, nk)
            stored, top = stored_values(probs, precision)
            mask = trace.get(prefix + "mask")
            masked = None if mask is None else np.isneginf(np.asarray(mask)[:nq, :nk])  # (nq, nk) −∞ cells
            masked = masked.astype(np.uint8) if masked is not None and masked.any() else None
            entry = {"layer": layer, "offset": offset,
                     "max": [float(v) for v in np.asarray(probs, dtype=np.float32).max(axis=(1, 2))]}
            chunks.append(_planes(stored))
            offset += stored.nbytes
            if top is not None:
                entry["scale"] = [float(v) for v in top]
            if masked is not None:
                entry["mask_offset"] = offset
                chunks.append(masked.tobytes())
                offset += masked.nbytes
            entries.append(entry)
        meta_parts.append({"part": p, "name": part_name(p, bool(trace.has_cross or trace.n_enc_layers)), "heads": h, "n_layers": trace.layers_in(p),
                           "queries": _labels(row_labels(trace, p), tq)[:nq],
                           "keys": _labels(trace.key_tokens(p), tk)[:nk], "layers": entries})
    raw = b"".join(chunks)
    meta = {"precision": precision, "parts": meta_parts, "notices": notices,
            "model": str(trace.meta.get("model_name") or "model"), "kind": trace.kind,
            "input": trace.meta.get("input_text") or ("image input" if trace.grid else ""),
            "line_tokens": MAX_LINE_TOKENS, "raw_bytes": len(raw)}
    blob = base64.b64encode(zlib.compress(raw, 6)).decode("ascii")
    return HtmlData(meta, blob, len(raw), notices)
