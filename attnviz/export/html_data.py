"""What an interactive HTML figure holds: the attention of a Trace, stored compactly, within a size budget.

Qt-free (numpy and zlib only): the page needs no renderer, only the numbers and the app's colours.
Every map is read through :meth:`Trace.probs` / :meth:`Trace.pooled_probs` one head at a time, so
building a page holds what the page keeps plus one head's block, never a layer's T×T at long length.

Every attention map of the parts shown (self; encoder and cross-attention of encoder–decoders) goes
into one byte string, deflate-compressed and base64-encoded into the page, decoded in the browser:

- ``fp16``: each weight as IEEE half precision (error ≤ 2⁻¹¹ of the weight, ≤ 2⁻²⁵ below 2⁻¹⁴),
  each layer's high bytes before its low bytes;
- ``uint8``: each row quantised to 0..255 of that row's own maximum, the row maxima kept as float32
  (error ≤ 1/510 of the row's largest weight: a causal row of 1,500 tokens, weights ~1/1,500, keeps
  two to three significant digits; a per-map scale stored ~80 % of them as 0).

``auto`` takes fp16 while the maps fit :data:`FP16_BUDGET` bytes, else uint8. Past :data:`MAX_BYTES`
the maps are max-pooled (each stored cell the largest weight of a block of queries × keys, so a
column of 1.0 stays visible at every size) to the largest side that fits, never below
:data:`MIN_SIDE`; only then are layers left out, and the page says so.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field

import numpy as np

from attnviz.analysis.decoder_positions import end_row, row_labels
from attnviz.analysis.head_overview import pooled_mask
from attnviz.analysis.trace_parts import part_name
from attnviz.capture.trace import layer_prefix
from attnviz.errors import InputError

__all__ = ["HtmlData", "build_html_data", "stored_values", "decoded_values", "error_bound", "PRECISIONS",
           "FP16_BUDGET", "MAX_BYTES", "MAX_SIDE", "MIN_SIDE", "MAX_LINE_TOKENS", "BOUND_TEXT"]

PRECISIONS = ("auto", "fp16", "uint8")
FP16_BUDGET = 8 * 2**20  # raw bytes of fp16 maps still stored as fp16 by "auto" (6×12 heads at ~240 tokens)
MAX_BYTES = 24 * 2**20  # raw bytes of all maps at most: the file stays ≤ ~32 MB
# a pooled map's side at most: the head map fills the window (~760 CSS px on 1,920×1,080), 1,520 device px
# at 200 % are then pooled on the page from these; finer only costs bytes
MAX_SIDE = 1024
MIN_SIDE = 128  # coarser than this a map says little: layers are left out instead
# the app's token-lines limit (gui/views/token_lines_item.MAX_TOKENS; a test checks they agree): beyond it
# the lines are an unreadable solid block, so the page draws the first tokens' lines, as the app does
MAX_LINE_TOKENS = 200
# what the page says about the numbers it holds (its "precision" line); error_bound is the same in numbers
BOUND_TEXT = {"fp16": "float16: each within 2⁻¹¹ (0.05 %) of the weight",
              "uint8": "8 bits of each row's largest weight: each within 1/510 (0.2 %) of its row's maximum"}


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
    """The weights as the page stores them: (stored array, per-row maxima for uint8 else None).

    ``probs`` is (..., rows, cols); uint8 rows are scaled by their own maximum
    (``round(p / row_max · 255)``) and the maxima, shaped (..., rows), are returned as float32.
    """
    probs = np.asarray(probs, dtype=np.float32)
    if precision == "fp16":
        return probs.astype("<f2"), None
    top = probs.max(axis=-1)  # (..., rows) each row's maximum
    safe = np.where(top > 0, top, np.float32(1.0)).astype(np.float64)
    # in float64: float32's rounding of p / max · 255 could tip a half step the wrong way (past the bound)
    q = np.rint(np.clip(probs / safe[..., None], 0.0, 1.0) * 255.0).astype(np.uint8)
    return q, top.astype(np.float32)


def decoded_values(stored: np.ndarray, top: np.ndarray | None) -> np.ndarray:
    """What the page shows for stored weights (float64), the inverse of :func:`stored_values`."""
    if top is None:
        return stored.astype(np.float64)
    return stored.astype(np.float64) / 255.0 * top.astype(np.float64)[..., None]


def error_bound(precision: str, weights: np.ndarray) -> np.ndarray:
    """The largest difference the page's stored values may have from ``weights`` (..., rows, cols).

    fp16 rounds to the nearest half: half a unit in the last place, 2⁻¹¹ of the weight (2⁻²⁵ for the
    subnormals below 2⁻¹⁴); uint8 rounds to 1/255 of the row's maximum: half a step, 1/510 of it.
    """
    w = np.abs(np.asarray(weights, dtype=np.float64))
    if precision == "fp16":
        return np.maximum(w * 2.0**-11, 2.0**-25)
    return np.broadcast_to(w.max(axis=-1, keepdims=True) / 510.0, w.shape)


def _mb(n: int) -> str:
    return f"{n / 2**20:.3g} MB"


def _steps(tq: int, tk: int, side: int | None) -> tuple[int, int]:
    """(row step, col step) of a map pooled to at most ``side`` cells a side (1, 1: every cell)."""
    if side is None:
        return 1, 1
    return max(1, -(-tq // side)), max(1, -(-tk // side))


def _cells(tq: int, tk: int, side: int | None) -> tuple[int, int]:
    rs, cs = _steps(tq, tk, side)
    return -(-tq // rs), -(-tk // cs)


def _plan(trace, parts: list[str], precision: str, max_bytes: int):
    """(precision, layers kept per part, pooled side or None, notices) within the budget."""
    shapes = {p: trace.probs_shape(0, p) for p in parts}  # (H, Tq, Tk)
    n_layers = {p: trace.layers_in(p) for p in parts}
    masks = {p: int(layer_prefix(0, p) + "mask" in trace) for p in parts}  # a byte per cell when masked

    def size(item: int, layers: dict, side: int | None) -> int:
        total = 0
        for p, (h, tq, tk) in shapes.items():
            nq, nk = _cells(tq, tk, side)
            total += layers[p] * ((h * item + masks[p]) * nq * nk + (4 * h * nq if item == 1 else 0))
        return total

    if precision == "auto":
        precision = "fp16" if size(2, n_layers, None) <= FP16_BUDGET else "uint8"
    item = 2 if precision == "fp16" else 1
    notices, keep, side = [], dict(n_layers), None
    if size(item, keep, None) > max_bytes:
        longest = max(max(tq, tk) for _, tq, tk in shapes.values())
        side = min(MAX_SIDE, longest)
        while side > MIN_SIDE and size(item, keep, side) > max_bytes:
            side = max(MIN_SIDE, int(side * 0.9))
        side = side if side < longest else None  # a short input is never pooled: layers are left out instead
    while size(item, keep, side) > max_bytes and max(keep.values()) > 1:
        top = max(keep, key=keep.get)
        keep[top] -= 1
    return precision, keep, side, notices


def _page_mask(trace, layer: int, part: str, rs: int, cs: int) -> np.ndarray | None:
    """(ceil(Tq/rs), ceil(Tk/cs)) uint8, the page's encoding: 1 where every cell of the block is masked; None
    when no block is (the page then stores no mask). The pooling is the grid's
    (:func:`attnviz.analysis.head_overview.pooled_mask`: padding never unmasks a block)."""
    masked = pooled_mask(trace, part, rs, cs, 256, layer=layer)  # bands of 256 rows: never the whole T×T
    return masked.astype(np.uint8) if masked is not None and masked.any() else None


def _head_map(trace, layer: int, part: str, head: int, side: int | None) -> np.ndarray:
    """One head's map as stored: every weight (side None) or max-pooled to ``side`` — (rows, cols) float32."""
    if side is None:
        return trace.probs(layer, part, heads=head)[0]
    return trace.pooled_probs(layer, part, head, max_rows=side, max_cols=side)[0]


def _layer_bytes(trace, layer: int, part: str, heads: int, side: int | None, precision: str):
    """(chunks of this layer's bytes, entry fields) one head at a time: values, row maxima, mask."""
    values, scales, top = [], [], []
    for h in range(heads):
        m = _head_map(trace, layer, part, h, side)  # (nq, nk)
        stored, rows = stored_values(m, precision)
        top.append(float(m.max()) if m.size else 0.0)
        values.append(stored)
        if rows is not None:
            scales.append(rows)
    return values, (np.stack(scales) if scales else None), top  # (H, nq) row maxima for uint8


def _planes(values: list[np.ndarray]) -> bytes:
    """fp16 as two byte planes (all high bytes, then all low bytes): the high bytes (sign, exponent) of
    attention weights repeat, and deflate packs them ~15 % tighter apart from the noisy low bytes."""
    if values[0].dtype.itemsize == 1:
        return b"".join(v.tobytes() for v in values)
    pairs = [np.ascontiguousarray(v, dtype="<f2").view(np.uint8).reshape(-1, 2) for v in values]  # (n, [lo, hi])
    return b"".join(p[:, 1].tobytes() for p in pairs) + b"".join(p[:, 0].tobytes() for p in pairs)


def _picture(trace) -> np.ndarray | None:
    """A vision input's picture as (S, S, 3) uint8 (the trace keeps it as floats in [0, 1]), or None."""
    if trace.grid is None or "image" not in trace:
        return None
    img = np.asarray(trace["image"], dtype=np.float32)  # (S, S, C)
    img = np.repeat(img, 3, axis=2) if img.shape[2] == 1 else img[..., :3]
    return np.ascontiguousarray((np.clip(img, 0, 1) * 255).round().astype(np.uint8))


def build_html_data(trace, part: str | None = None, precision: str = "auto", max_bytes: int = MAX_BYTES,
                    first_layer: int = 0) -> HtmlData:
    """The attention maps of ``trace`` for the interactive page.

    Parameters
    ----------
    part : only this part ("self", "cross", "enc"); None: every part the trace has.
    precision : "auto", "fp16" or "uint8" (see the module docstring).
    max_bytes : raw size of the stored maps at most; beyond it maps are max-pooled, then layers left out.
    first_layer : the first layer stored when not all fit (the page says which are shown).
    """
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}: choose {', '.join(PRECISIONS)}")
    if part is not None:
        trace.check_selection(part, first_layer, 0)  # e.g. cross-attention of an encoder: one line
        parts = [part]
    else:
        parts = list(trace.parts)
    precision, keep, side, notices = _plan(trace, parts, precision, max_bytes)
    compress = zlib.compressobj(6)
    packed, offset, meta_parts = [], 0, []
    two_stacks = bool(trace.has_cross or trace.n_enc_layers)
    for p in parts:
        h, tq, tk = trace.probs_shape(0, p)
        rs, cs = _steps(tq, tk, side)
        nq, nk = _cells(tq, tk, side)
        start = min(first_layer, max(0, trace.layers_in(p) - keep[p]))
        layers = list(range(start, start + keep[p]))
        if keep[p] < trace.layers_in(p):
            notices.append(f"showing layers {start}–{layers[-1]} of {trace.layers_in(p)} ({part_name(p, two_stacks)}): "
                           f"all layers would not fit in {_mb(max_bytes)}; export another range with --layer "
                           "(layer= in Python)")
        entries = []
        for layer in layers:
            values, scales, top = _layer_bytes(trace, layer, p, h, side, precision)
            entry = {"layer": layer, "offset": offset, "max": top}
            chunk = _planes(values)
            if scales is not None:
                entry["scale_offset"] = offset + len(chunk)
                chunk += scales.astype("<f4").tobytes()
            masked = _page_mask(trace, layer, p, rs, cs)  # (nq, nk)
            if masked is not None:
                entry["mask_offset"] = offset + len(chunk)
                chunk += masked.tobytes()
            packed.append(compress.compress(chunk))  # compressed as it goes: the raw bytes never pile up
            offset += len(chunk)
            entries.append(entry)
        meta_parts.append({"part": p, "name": part_name(p, two_stacks), "heads": h, "n_layers": trace.layers_in(p),
                           "queries": _labels(row_labels(trace, p), tq), "keys": _labels(trace.key_tokens(p), tk),
                           "rows": nq, "cols": nk, "row_step": rs, "col_step": cs, "layers": entries,
                           # the row that wrote nothing (translate's "(end)"), washed out as the app's head map does
                           "veiled": end_row(trace, p) if rs == 1 else None})
    if side is not None:
        biggest = max(max(P["row_step"], P["col_step"]) for P in meta_parts)
        # "stored", where the title says "drawn": the page keeps blocks, the screen may pool them again
        notices.append(f"the page stores the largest weight of each block of up to {biggest}×{biggest} query × key "
                       f"positions: every weight would not fit in {_mb(max_bytes)}")
    image = _picture(trace)
    if image is not None:  # a vision input: the page draws the patch grid over it
        packed.append(compress.compress(image.tobytes()))
        image_meta = {"offset": offset, "height": image.shape[0], "width": image.shape[1], "grid": list(trace.grid),
                      "prefix": len(trace.tokens) - trace.grid[0] * trace.grid[1]}
        offset += image.nbytes
    packed.append(compress.flush())
    described = trace.description
    meta = {"precision": precision, "bound": BOUND_TEXT[precision], "parts": meta_parts, "notices": notices,
            "pooled": side is not None, "model": described.model_name or "model", "kind": trace.kind,
            "input": described.input_text or ("image input" if trace.grid else ""),
            "line_tokens": MAX_LINE_TOKENS, "raw_bytes": offset, "image": image_meta if image is not None else None}
    blob = base64.b64encode(b"".join(packed)).decode("ascii")
    return HtmlData(meta, blob, offset, notices)
