"""Labels of output rows that hold no token: a model's embedding matrix padded past its tokenizer's vocabulary
(to a multiple of 64 or 128) has rows no text can produce; they keep a label so every row is named, and the
prediction panel leaves them out of its ranking."""

from __future__ import annotations

__all__ = ["no_token_label", "is_no_token_label"]


def no_token_label(row: int) -> str:
    """The label of output row ``row`` when no token of the tokenizer maps to it."""
    return f"[row {int(row)}]"


def is_no_token_label(label: str, row: int) -> bool:
    """True when ``label`` is row ``row``'s no-token label (a real token spelled "[row 5]" at another row is not)."""
    return label == no_token_label(row)
