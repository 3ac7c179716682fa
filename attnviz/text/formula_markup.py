"""The project's plain formula notation ("q_i = x_i W_Q + b_Q", "÷√d_k") as HTML with real subscripts (Qt-free: the
app's labels, the lesson stage and the lecture pack's index pages all write it so)."""

from __future__ import annotations

import html
import re

__all__ = ["formula_html", "formula_plain", "has_subscripts", "subscripts_in_html"]

# one symbol (a letter, Σ) then "_" and its index: q_i, W_Q, d_k, d_model, Σ_j — not snake_case words
_SUB = re.compile(r"(?<![A-Za-z0-9_])([A-Za-zΣ])_([A-Za-z0-9]+)(?![A-Za-z0-9_])")


def has_subscripts(text: str) -> bool:
    return bool(_SUB.search(text))


def formula_html(text: str) -> str:
    """``text`` as rich text: indices as subscripts, the rest escaped (line breaks kept)."""
    out = html.escape(text, quote=False)
    out = _SUB.sub(lambda m: f"{m.group(1)}<sub>{m.group(2)}</sub>", out)
    return out.replace("\n", "<br>")


def subscripts_in_html(rich: str) -> str:
    """Rich text (a figure's title with coloured spans, an axis label) with its indices as subscripts, nothing else
    touched: the deck printed "√d_k" and "∂ x_t" with their underscores. For fixed texts only, never tokens."""
    return _SUB.sub(lambda m: f"{m.group(1)}<sub>{m.group(2)}</sub>", rich)


def formula_plain(text: str) -> str:
    """``text`` with its indices run on, for where no markup is drawn (an image's alt text): "W_O" → "WO"."""
    return _SUB.sub(lambda m: m.group(1) + m.group(2), text)
