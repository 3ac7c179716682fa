"""Fit a tokenized input to a model's positions: refuse, or truncate with a notice when asked."""

from __future__ import annotations

from attnviz.errors import InputError

__all__ = ["fit_tokens", "too_long"]


def too_long(what: str, n: int, who: str, limit: int) -> str:
    """The one refusal of a text longer than a model's positions; it names both ways on (the app cuts by itself)."""
    return (f"{what} has {n:,} tokens but {who} takes at most {limit:,}; shorten it, or keep the first {limit:,} "
            "(--truncate on the command line, truncate=True in Python)")


def fit_tokens(ids: list[int], tokens: list[str], limit: int, truncate: bool, what: str = "the text"):
    """``(ids, tokens, notice)`` cut to ``limit`` positions when ``truncate``; InputError otherwise.

    ``notice`` is None when nothing was cut, else a sentence for the user.
    """
    if len(ids) <= limit:
        return ids, tokens, None
    if not truncate:
        raise InputError(too_long(what, len(ids), "the model", limit))
    return ids[:limit], tokens[:limit], f"{what} truncated to the model's {limit} positions (it had {len(ids)} tokens)"
