"""Formulae as a slide writes them: "q_i = x_i W_Q + b_Q" with real subscripts (q<sub>i</sub>), "÷√d_k" as
÷√d<sub>k</sub>. The text stays the project's plain notation everywhere else (exports' data, tooltips)."""

from __future__ import annotations

from attnviz.text.formula_markup import formula_html, has_subscripts, subscripts_in_html

__all__ = ["formula_html", "has_subscripts", "subscripts_in_html", "show_formula"]


def show_formula(label, text: str) -> None:
    """Put ``text`` (a slide's title or caption) on a QLabel as the exported deck draws it: "W_O" and "√d_k"
    with real subscripts (the live lesson printed the underscores), plain text otherwise (a token holding "<"
    stays literal)."""
    from PySide6.QtCore import Qt

    rich = has_subscripts(text)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setText(formula_html(text) if rich else text)
