"""Fit a tokenized input to a model's positions: refuse, or truncate with a notice when asked."""

from __future__ import annotations

from attnviz.errors import InputError

__all__ = ["fit_tokens"]


def fit_tokens(ids: list[int], tokens: list[str], limit: int, truncate: bool, what: str = "the text"):
    """``(ids, tokens, notice)`` cut to ``limit`` positions when ``truncate``; InputError otherwise.

    ``notice`` is None when nothing was cut, else a sentence for the user.
    """
    if len(ids) <= limit:
        return ids, tokens, None
    if not truncate:
        raise InputError(f"{what} has {len(ids):,} tokens but the model takes at most {limit:,}; shorten it")
    return ids[:limit], tokens[:limit], f"{what} truncated to the model's {limit} positions (it had {len(ids)} tokens)"
