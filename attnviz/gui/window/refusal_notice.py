"""The notice for an input the model refused: the refusal, what to do about it, and what the views show now.

A refusal over length (the loader's "takes at most N", a model that keeps full maps "up to N tokens") gets the
advice to shorten the input to that many tokens; every refusal of a typed text says the views are cleared
(none keeps the previous input's maps on screen as if they were this one's).
"""

from __future__ import annotations

import re

__all__ = ["refusal_notice"]

# "takes at most 512" (attnviz.hf.inputs), "up to 2,048 tokens (this input has 3,000)" (attnviz.hf.capture)
_LIMIT = re.compile(r"(?:takes at most|up to) ([\d,]+)(?: tokens)?")


def refusal_notice(message: str, cleared: bool) -> str:
    """One line for the notice bar.

    Parameters
    ----------
    message : str
        The refusal as raised (:class:`attnviz.errors.InputError`'s text).
    cleared : bool
        The views were cleared for it (a typed text: they show no input until one runs).

    Returns
    -------
    str
        ``message``, then "shorten the input to N tokens or fewer" when it refuses over a length and does not
        already say to shorten it, then what the views show.
    """
    text = message.strip().rstrip(".")
    limit = _LIMIT.search(text)
    if limit and "shorten" not in text.lower():
        text += f"; shorten the input to {limit.group(1)} tokens or fewer"
    if cleared:
        text += " (the views are empty until an input runs)"
    return text
