"""Formulae as a slide writes them: "q_i = x_i W_Q + b_Q" with real subscripts (q<sub>i</sub>), "÷√d_k" as
÷√d<sub>k</sub>. The text stays the project's plain notation everywhere else (exports' data, tooltips)."""

from __future__ import annotations

import html
import re

__all__ = ["formula_html", "has_subscripts", "subscripts_in_html", "show_formula"]

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


def show_formula(label, text: str) -> None:
    """Put ``text`` (a slide's title or caption) on a QLabel as the exported deck draws it: "W_O" and "√d_k"
    with real subscripts (the live lesson printed the underscores), plain text otherwise (a token holding "<"
    stays literal)."""
    from PySide6.QtCore import Qt

    rich = has_subscripts(text)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setText(formula_html(text) if rich else text)
