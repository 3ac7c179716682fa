"""Why a model has no position table to draw, in the words of its own kind of position information.

A rotary (Llama-family) model adds no vector to its input: "this model's recording has no position encodings"
read as a recording fault, beside an empty 0–1 colour bar. The two position views say what the model does
instead."""

from __future__ import annotations

__all__ = ["no_table_reason"]

_HOW = {
    "rotary": "rotary (RoPE): each head's queries and keys are rotated by their position inside attention",
    "alibi": "ALiBi: a penalty growing with distance is added to the attention scores",
    "relative": "relative: attention reads the distance between query and key",
}


def no_table_reason(trace, what: str) -> str:
    """The title of a position view whose trace carries no ``emb.pos``; ``what``: "encodings" or "embeddings"."""
    kind = (trace.description.position or "").lower()
    how = next((text for key, text in _HOW.items() if key in kind), None)
    if how is None:
        return f"This model's recording has no position {what}"
    return f"No position {what} to draw: this model adds none to its input. Its positions are {how}"
